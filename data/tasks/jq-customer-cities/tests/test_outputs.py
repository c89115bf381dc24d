from pathlib import Path

EXPECTED = ["Bergen", "Brno", "Cork", "Ghent", "Graz", "Lyon", "Malmo", "Porto", "Tartu", "Turku"]


def test_cities_exact():
    lines = [l.strip() for l in Path("/app/cities.txt").read_text().splitlines() if l.strip()]
    assert lines == EXPECTED
