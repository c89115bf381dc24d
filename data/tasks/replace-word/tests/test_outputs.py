from pathlib import Path


def text():
    return Path("/app/motd.txt").read_text()


def test_no_staging_left():
    assert "staging" not in text()
    assert text().count("production") >= 1


def test_content_replaced():
    assert text().rstrip("\n") == ("Welcome to the production server.\n"
                                   "The production database is refreshed nightly.\n"
                                   "Report production issues to ops.")
