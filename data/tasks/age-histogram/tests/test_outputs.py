import csv
from pathlib import Path

EXPECTED = [('0-9', 10), ('10-19', 20), ('20-29', 40), ('30-39', 57), ('40-49', 20), ('50-59', 12), ('60-69', 7), ('70-79', 0), ('80-89', 13), ('90-99', 11)]


def test_histogram_rows():
    rows = [r for r in csv.reader(Path("/app/histogram.csv").read_text().splitlines()) if r]
    assert [c.strip() for c in rows[0]] == ["bin", "count"]
    got = [(b.strip(), int(c)) for b, c in rows[1:]]
    assert got == [tuple(e) for e in EXPECTED]
