import subprocess
from pathlib import Path

REPO = "/app/repo"
ORIGINAL_HEAD = "2add830745a6219cf11ab6738f19e9e5f5d7f5fe"
EXPECTED = """server:
  port: 8443
  workers: 4
database:
  host: db.internal
  name: orders
  pool_size: 16
feature_flags:
  new_checkout: true
"""


def git(*args):
    return subprocess.run(["git", "-C", REPO, *args], capture_output=True, text=True)


def test_file_restored():
    check_history_preserved()
    assert Path(REPO, "config/settings.yaml").read_text() == EXPECTED


def test_restoration_committed():
    check_history_preserved()
    assert git("show", "HEAD:config/settings.yaml").stdout == EXPECTED
    assert git("rev-parse", "--abbrev-ref", "HEAD").stdout.strip() == "main"
    assert git("status", "--porcelain", "--", "config").stdout == ""


def check_history_preserved():
    # a guard, not a scored test: every scored test calls it, so an empty or destructive attempt scores 0
    assert git("merge-base", "--is-ancestor", ORIGINAL_HEAD, "HEAD").returncode == 0
