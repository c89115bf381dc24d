from pathlib import Path

EXPECTED = [("london", 0.7822), ("berlin", 0.7378), ("dublin", 0.6320), ("oslo", 0.6301), ("rome", 0.6166)]


def rows():
    return [l.split() for l in Path("/app/neighbours.txt").read_text().splitlines() if l.strip()]


def test_neighbour_words():
    assert [r[0] for r in rows()] == [w for w, _ in EXPECTED]


def test_similarities():
    got = rows()
    assert len(got) == 5
    for (w, s), r in zip(EXPECTED, got):
        assert len(r) == 2 and abs(float(r[1]) - s) <= 0.0011, (w, r)
