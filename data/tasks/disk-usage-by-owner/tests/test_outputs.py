from pathlib import Path

EXPECTED = [("boris", 377777), ("chen", 251234), ("anna", 265499), ("4242", 5000), ("root", 10)]
EXPECTED = sorted(EXPECTED, key=lambda r: -r[1])


def rows():
    out = []
    for line in Path("/app/usage_by_owner.txt").read_text().splitlines():
        if line.strip():
            owner, size = line.split()
            out.append((owner, int(size)))
    return out


def test_owners():
    assert sorted(o for o, _ in rows()) == sorted(o for o, _ in EXPECTED)


def test_byte_totals():
    assert rows() == EXPECTED
