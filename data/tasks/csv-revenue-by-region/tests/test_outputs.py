from pathlib import Path

EXPECTED = [('east', '3971.52'), ('south', '3423.91'), ('west', '3027.49'), ('north', '2692.56'), ('central', '2262.90')]


def rows():
    return [l.strip() for l in Path("/app/revenue_by_region.csv").read_text().splitlines() if l.strip()]


def test_header():
    assert rows()[0].replace(" ", "") == "region,revenue"


def test_revenue_values():
    got = dict(tuple(c.strip() for c in r.split(",")) for r in rows()[1:])
    assert got == dict(EXPECTED)


def test_sorted_descending():
    got = [tuple(c.strip() for c in r.split(",")) for r in rows()[1:]]
    assert got == EXPECTED
