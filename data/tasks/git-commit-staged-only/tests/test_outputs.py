import subprocess

REPO = "/app/repo"


def git(*args):
    r = subprocess.run(["git", "-C", REPO, *args], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    return r.stdout


def test_commit_content_and_author():
    assert git("log", "-1", "--format=%an <%ae>|%s").strip() == "Release Bot <bot@example.com>|Bump version to 2.0.0"
    assert git("rev-list", "--count", "HEAD").strip() == "3"
    assert git("log", "-1", "HEAD~1", "--format=%s").strip() == "Add gizmo.py"
    changed = sorted(git("diff-tree", "--no-commit-id", "--name-only", "-r", "HEAD").split())
    assert changed == ["CHANGES.md", "package.toml"]
    assert 'version = "2.0.0"' in git("show", "HEAD:package.toml")
    assert "Work in progress" not in git("show", "HEAD:README.md")


def test_unstaged_changes_kept():
    assert git("log", "-1", "--format=%s").strip() == "Bump version to 2.0.0"
    assert "Work in progress: do not commit this line." in open(REPO + "/README.md").read()
    assert open(REPO + "/notes.tmp").read() == "scratch\n"
    assert git("diff", "--cached", "--name-only").strip() == ""
