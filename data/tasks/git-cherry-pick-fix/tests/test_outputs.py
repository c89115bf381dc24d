import subprocess
import tempfile
from pathlib import Path

REPO = "/app/repo"


def git(*args):
    r = subprocess.run(["git", "-C", REPO, *args], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    return r.stdout


def test_fix_on_release_branch():
    assert git("rev-list", "--count", "release-1.x").strip() == "3"
    assert git("log", "-1", "--format=%s", "release-1.x~1").strip() == "Prepare 1.0.1"
    assert git("rev-list", "--merges", "release-1.x").strip() == ""
    assert git("show", "release-1.x:VERSION") == "1.0.1\n"
    files = sorted(git("ls-tree", "--name-only", "release-1.x").split())
    assert files == ["VERSION", "pager.py"]
    with tempfile.TemporaryDirectory() as d:
        Path(d, "pager.py").write_text(git("show", "release-1.x:pager.py"))
        code = "import pager; print(pager.paginate(list(range(25)), 2), pager.paginate(list(range(25)), 3))"
        out = subprocess.run(["python3", "-c", code], cwd=d, capture_output=True, text=True).stdout
    assert out.strip() == str(list(range(10, 20))) + " " + str(list(range(20, 25)))
    assert "paginate_all" not in git("show", "release-1.x:pager.py")


def test_nothing_else_moved():
    assert git("rev-list", "--count", "main").strip() == "5"
    assert git("log", "-1", "--format=%s", "main").strip() == "Add paginate_all"
    assert git("rev-list", "--count", "release-1.x").strip() == "3"
