from pathlib import Path


def test_output_exists():
    assert Path("/app/output").exists(), "/app/output does not exist"


def test_output_is_directory():
    assert Path("/app/output").is_dir(), "/app/output is not a directory"
