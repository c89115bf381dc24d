from pathlib import Path


def test_listing_exists():
    assert Path("/app/listing.txt").is_file(), "/app/listing.txt does not exist"


def test_listing_content():
    names = [l.strip() for l in Path("/app/listing.txt").read_text().splitlines() if l.strip()]
    assert names == ["changelog.md", "faq.md", "install.md", "intro.md", "usage.md"]
