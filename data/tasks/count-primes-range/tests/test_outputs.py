from pathlib import Path


def test_prime_count():
    assert int(Path("/app/prime_count.txt").read_text().strip()) == 70435
