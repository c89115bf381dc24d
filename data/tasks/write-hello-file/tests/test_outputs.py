from pathlib import Path

HELLO = Path("/app/hello.txt")


def test_file_exists():
    assert HELLO.is_file(), "/app/hello.txt does not exist"


def test_file_content():
    # A single trailing newline (as written by echo) is fine.
    assert HELLO.read_text().strip() == "hello"
