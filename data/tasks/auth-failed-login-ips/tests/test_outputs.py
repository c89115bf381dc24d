from pathlib import Path

EXPECTED = ["10.0.5.17", "192.0.2.44", "198.51.100.23", "203.0.113.250", "203.0.113.7", "45.33.12.9"]


def test_failed_ips():
    lines = [l.strip() for l in Path("/app/failed_ips.txt").read_text().splitlines() if l.strip()]
    assert sorted(lines) == EXPECTED
