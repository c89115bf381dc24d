from pathlib import Path


def test_output_exists():
    assert Path("/app/output.txt").is_file(), "/app/output.txt does not exist"


def test_output_uppercase():
    got = Path("/app/output.txt").read_text().rstrip("\n")
    assert got == "THE QUICK BROWN FOX\nJUMPS OVER THE LAZY DOG\nVERSION 2.1 RELEASED"
