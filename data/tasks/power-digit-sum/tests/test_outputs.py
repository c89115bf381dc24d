from pathlib import Path


def lines():
    return [l.strip() for l in Path("/app/answer.txt").read_text().splitlines() if l.strip()]


def test_digit_count():
    assert int(lines()[0]) == 657


def test_digit_sum():
    got = lines()
    assert len(got) == 2
    assert int(got[1]) == 2989
