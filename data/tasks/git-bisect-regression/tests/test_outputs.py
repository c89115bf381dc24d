import subprocess
import tempfile
from pathlib import Path

REPO = "/app/mathlib"
FIRST_BAD = "8458b32fb9147e184b8c4c3d93d1e331d426afd1"
ORIGINAL_HEAD = "2b6711521e0ee46341846eb4979ea8c24b4aa5fe"


def git(*args):
    return subprocess.run(["git", "-C", REPO, *args], capture_output=True, text=True)


def test_first_bad_commit():
    assert Path("/app/first_bad_commit.txt").read_text().strip() == FIRST_BAD


def test_check_passes_at_head():
    # run check.py against the committed HEAD tree, not the working directory
    with tempfile.TemporaryDirectory() as d:
        for name in ("mathlib.py", "check.py"):
            Path(d, name).write_text(git("show", f"HEAD:{name}").stdout)
        out = subprocess.run(["python3", "check.py"], cwd=d, capture_output=True, text=True, timeout=30)
    assert out.returncode == 0 and out.stdout.strip() == "OK", out.stdout + out.stderr


def test_history_and_features_kept():
    assert git("merge-base", "--is-ancestor", ORIGINAL_HEAD, "HEAD").returncode == 0
    assert git("rev-parse", "HEAD").stdout.strip() != ORIGINAL_HEAD
    code = "import mathlib; print(mathlib.lcm(4, 6), mathlib.double_39(5))"
    out = subprocess.run(["python3", "-c", code], cwd=REPO, capture_output=True, text=True, timeout=30)
    assert out.stdout.split() == ["12", "10"], out.stderr
