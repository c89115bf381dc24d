import csv
from pathlib import Path

EXPECTED = {'Oslo': -19.5, 'Cairo': 6.888888888888888, 'Quito': -8.166666666666666, 'Perth': 12.0, 'Reno': 0.0, 'Minsk': -34.333333333333336, 'Lagos': -38.888888888888886, 'Hanoi': 32.111111111111114, 'Lima': -17.666666666666668, 'Nome': -19.833333333333332, 'Dubai': 45.72222222222222, 'Yakutsk': -40.0}


def test_celsius_values():
    text = Path("/app/temps_c.csv").read_text()
    rows = list(csv.reader(text.splitlines()))
    assert [c.strip() for c in rows[0]] == ["city", "temp_c"]
    got = {}
    for row in rows[1:]:
        if not row:
            continue
        city, value = row
        assert "." in value and len(value.split(".")[1]) == 1, f"{value!r} is not rounded to 1 decimal"
        got[city.strip()] = float(value)
    assert [r[0] for r in rows[1:] if r] == list(EXPECTED), "rows must keep the input order"
    for city, want in EXPECTED.items():
        assert abs(got[city] - want) <= 0.051, (city, got[city], want)
