import subprocess
from pathlib import Path

REPO = "/app/service"


def git(*args):
    return subprocess.run(["git", "-C", REPO, *args], capture_output=True, text=True)


def test_key_file_exists():
    assert Path("/app/leaked_key.txt").is_file()


def test_key_value():
    assert Path("/app/leaked_key.txt").read_text().strip() == "sk_live_9fQ2xT7mLp4Rz8Kw"


def test_gitignore_committed():
    committed = git("show", "HEAD:.gitignore")
    assert committed.returncode == 0, ".gitignore is not committed at HEAD"
    patterns = [l.strip() for l in committed.stdout.splitlines()]
    assert any(p in (".env", "/.env", "*.env", ".env*") for p in patterns), patterns
    # git itself must agree that .env is ignored
    Path(REPO, ".env").write_text("X=1\n")
    try:
        assert git("check-ignore", "-q", ".env").returncode == 0
    finally:
        Path(REPO, ".env").unlink()
