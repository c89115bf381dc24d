from pathlib import Path

ORIGINAL = "[server]\nhost = 0.0.0.0\nport = 8080\n\n[database]\nurl = postgres://db:5432/app\npool = 10\n"


def test_backup_exists():
    check_original_kept()
    assert Path("/app/config.ini.bak").is_file(), "/app/config.ini.bak does not exist"


def test_backup_identical():
    check_original_kept()
    assert Path("/app/config.ini.bak").read_text() == ORIGINAL


def check_original_kept():
    # a guard, not a scored test: every scored test calls it, so an empty or destructive attempt scores 0
    assert Path("/app/config.ini").read_text() == ORIGINAL
