from pathlib import Path

COUNT = Path("/app/count.txt")


def test_count_file_exists():
    assert COUNT.is_file(), "/app/count.txt does not exist"


def test_count_value():
    # data.txt has 137 lines; surrounding whitespace is allowed.
    assert COUNT.read_text().strip() == "137"
