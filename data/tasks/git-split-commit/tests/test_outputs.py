import subprocess

REPO = "/app/repo"
TREE = "f4bd819791fef9c463fe7af6ccdc9cf765277719"
ROOT = "94d43c0f83f5f517298f7cd820ee9bcdcf5a0d60"


def git(*args):
    r = subprocess.run(["git", "-C", REPO, *args], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    return r.stdout.strip()


def changes(rev):
    return sorted(git("diff-tree", "--no-commit-id", "--name-status", "-r", rev).split("\n"))


def test_commit_sequence():
    assert git("log", "--format=%s", "main").split("\n") == [
        "Add example config", "Add CLI", "Add config loader", "Fix README typo", "Initial commit"]
    assert git("rev-parse", "main~4") == ROOT
    assert git("rev-list", "--merges", "main") == ""


def test_each_commit_changes():
    assert changes("main~3") == ["M\tREADME.md"]
    assert "A collection of tools." in git("show", "main~3:README.md")
    assert changes("main~2") == ["A\tconfig.py"]
    assert "def load_config" in git("show", "main~2:config.py")
    assert changes("main~1") == ["M\tapp.py"]
    assert changes("main") == ["A\texample.json"]


def test_final_tree_and_state():
    assert git("rev-parse", "main^{tree}") == TREE
    assert git("symbolic-ref", "--short", "HEAD") == "main"
    assert git("status", "--porcelain") == ""
    assert git("rev-list", "--count", "main") == "5"
