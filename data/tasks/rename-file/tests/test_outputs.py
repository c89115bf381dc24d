from pathlib import Path


def test_new_name_exists():
    assert Path("/app/b.txt").is_file(), "/app/b.txt does not exist"


def test_old_name_gone():
    assert Path("/app/b.txt").is_file(), "/app/b.txt does not exist (a.txt must be renamed, not deleted)"
    assert not Path("/app/a.txt").exists(), "/app/a.txt still exists (it should be renamed, not copied)"


def test_content_preserved():
    assert Path("/app/b.txt").read_text() == "quarterly report draft\nrevenue: 1200\ncosts: 800\n"
