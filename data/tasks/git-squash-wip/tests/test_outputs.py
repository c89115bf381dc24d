import subprocess

REPO = "/app/repo"
TREE = "ee8f0332d401ccdf7162cc3db066643c84e0c6f3"
SKELETON = "f2324712a9ca74cd2facb0cd68f3863f715bcfc3"
INITIAL = "ea3aaef80e4ce5d58353451b064ddf348dcc8d32"
OTHER = "2e605c4ebfe56626e1275c2b60592dc05eef26bc"


def git(*args):
    r = subprocess.run(["git", "-C", REPO, *args], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    return r.stdout.strip()


def test_history_squashed():
    assert git("log", "--format=%s", "main").split("\n") == ["Implement parser", "Add parser skeleton", "Initial commit"]
    assert git("rev-parse", "main~1") == SKELETON
    assert git("rev-parse", "main~2") == INITIAL
    assert git("log", "-1", "--format=%B", "main").strip() == "Implement parser"


def test_content_and_other_branch():
    assert git("rev-parse", "main^{tree}") == TREE
    assert git("rev-parse", "other") == OTHER
    assert git("symbolic-ref", "--short", "HEAD") == "main"
    assert git("status", "--porcelain") == ""
    assert git("rev-list", "--count", "main") == "3"
