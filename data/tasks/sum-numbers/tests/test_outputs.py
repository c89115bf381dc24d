from pathlib import Path


def test_sum_exists():
    assert Path("/app/sum.txt").is_file(), "/app/sum.txt does not exist"


def test_sum_value():
    assert Path("/app/sum.txt").read_text().strip() == "9249"
