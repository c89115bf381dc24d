from pathlib import Path


def test_sorted_exists():
    assert Path("/app/sorted.txt").is_file(), "/app/sorted.txt does not exist"


def test_sorted_content():
    got = [l.strip() for l in Path("/app/sorted.txt").read_text().splitlines() if l.strip()]
    assert got == ["alice", "Bob", "Charlie", "Dave", "Eve", "Frank", "Grace", "heidi", "Ivan", "Mallory"]
