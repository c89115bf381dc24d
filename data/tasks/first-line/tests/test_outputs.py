from pathlib import Path


def test_header_file_exists():
    assert Path("/app/header.txt").is_file(), "/app/header.txt does not exist"


def test_header_content():
    assert Path("/app/header.txt").read_text().strip() == "id,name,price"
