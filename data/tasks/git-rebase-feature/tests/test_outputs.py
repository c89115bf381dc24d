import os
import subprocess
import tempfile
from pathlib import Path

REPO = "/app/repo"


def git(*args):
    r = subprocess.run(["git", "-C", REPO, *args], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    return r.stdout


def test_feature_linear_on_main():
    main_log = git("log", "--format=%s", "main").split("\n")[:-1]
    assert main_log == ["Add farewell", "Use Hi as greeting", "Initial app"]
    assert git("merge-base", "main", "feature").strip() == git("rev-parse", "main").strip()
    feat = git("log", "--format=%s", "main..feature").split("\n")[:-1]
    assert feat == ["Document shout", "Add shout check", "Add shout"]
    assert git("rev-list", "--merges", "feature").strip() == ""
    assert git("rev-list", "--count", "feature").strip() == "6"


def test_rebased_code_works():
    with tempfile.TemporaryDirectory() as d:
        for f in ("app.py", "check_shout.py", "README.md"):
            Path(d, f).write_text(git("show", f"feature:{f}"))
        code = "import app; print(app.greet('a'), app.farewell('b'), app.shout('c'))"
        out = subprocess.run(["python3", "-c", code], cwd=d, capture_output=True, text=True)
        assert out.stdout.strip() == "Hi, a! Bye, b. HI, C!", out.stderr
        out = subprocess.run(["python3", "check_shout.py"], cwd=d, capture_output=True, text=True)
        assert out.stdout.strip() == "ok"
        assert "<<<<<<<" not in Path(d, "app.py").read_text()


def test_clean_state():
    assert git("symbolic-ref", "--short", "HEAD").strip() == "feature"
    assert not os.path.exists(REPO + "/.git/rebase-merge") and not os.path.exists(REPO + "/.git/rebase-apply")
    assert git("status", "--porcelain", "--untracked-files=no").strip() == ""
    assert git("merge-base", "main", "feature").strip() == git("rev-parse", "main").strip()
