from pathlib import Path

EXPECTED = [
    "2024-06-01 12:04:07 ERROR db connection refused",
    "2024-06-01 12:13:07 ERROR db connection refused",
    "2024-06-01 12:19:07 ERROR disk full on /var",
    "2024-06-02 12:22:07 ERROR payment gateway timeout",
    "2024-06-02 12:28:07 ERROR payment gateway timeout",
    "2024-06-03 12:54:07 ERROR payment gateway timeout",
]


def test_errors_exists():
    assert Path("/app/errors.txt").is_file(), "/app/errors.txt does not exist"


def test_errors_content():
    got = [l.rstrip() for l in Path("/app/errors.txt").read_text().splitlines() if l.strip()]
    assert got == EXPECTED
