from pathlib import Path


def lines():
    return [l.strip() for l in Path("/app/hosts").read_text().splitlines() if l.strip()]


def test_line_present():
    check_existing_lines_kept()
    assert "10.0.0.9 cache.internal" in lines()


def test_line_is_last():
    check_existing_lines_kept()
    assert lines()[-1] == "10.0.0.9 cache.internal"
    assert lines().count("10.0.0.9 cache.internal") == 1


def check_existing_lines_kept():
    # a guard, not a scored test: every scored test calls it, so an empty or destructive attempt scores 0
    assert lines()[:3] == ["127.0.0.1 localhost", "::1 localhost ip6-localhost", "10.0.0.5 db.internal"]
