from pathlib import Path

ORIGINAL = "[server]\nhost = 0.0.0.0\nport = 8080\n\n[database]\nurl = postgres://db:5432/app\npool = 10\n"


def test_backup_exists():
    assert Path("/app/config.ini.bak").is_file(), "/app/config.ini.bak does not exist"


def test_backup_identical():
    assert Path("/app/config.ini.bak").read_text() == ORIGINAL


def test_original_kept():
    assert Path("/app/config.ini").read_text() == ORIGINAL
