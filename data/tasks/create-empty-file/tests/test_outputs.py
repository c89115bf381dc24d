from pathlib import Path

FLAG = Path("/app/ready.flag")


def test_flag_exists():
    assert FLAG.exists(), "/app/ready.flag does not exist"


def test_flag_is_empty_file():
    assert FLAG.is_file() and FLAG.stat().st_size == 0
