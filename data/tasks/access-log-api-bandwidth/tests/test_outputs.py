from pathlib import Path

EXPECTED = [("198.51.100.17", 905470), ("2001:db8::7", 679154), ("198.51.100.77", 674311),
            ("198.51.100.150", 603739), ("198.51.100.3", 534347)]


def rows():
    out = []
    for line in Path("/app/api_top5.txt").read_text().splitlines():
        if line.strip():
            ip, total = line.split()
            out.append((ip, int(total)))
    return out


def test_top5_ips():
    assert [ip for ip, _ in rows()] == [ip for ip, _ in EXPECTED]


def test_top5_totals():
    assert rows() == EXPECTED
