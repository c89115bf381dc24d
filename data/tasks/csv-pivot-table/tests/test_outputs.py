import csv
from pathlib import Path

HEADER = ['month', 'doohickey', 'gadget', 'gizmo', 'sprocket', 'widget', 'total']
ROWS = [['2024-01', 18, 64, 0, 72, 39, 193], ['2024-02', 33, 34, 0, 14, 36, 117], ['2024-03', 6, 22, 0, 73, 46, 147], ['2024-04', 32, 15, 0, 80, 13, 140], ['2024-05', 93, 0, 71, 59, 48, 271], ['2024-06', 85, 41, 84, 0, 14, 224], ['2024-08', 12, 52, 39, 0, 26, 129]]
TOTAL = ['TOTAL', 279, 228, 194, 298, 222, 1221]


def load():
    rows = [[c.strip() for c in r] for r in csv.reader(Path("/app/pivot.csv").read_text().splitlines()) if r]
    return rows[0], rows[1:]


def test_header_and_months():
    header, body = load()
    assert header == HEADER
    assert [r[0] for r in body] == [r[0] for r in ROWS] + ["TOTAL"]


def test_cells():
    header, body = load()
    assert header == HEADER
    got = {r[0]: [int(float(x)) for x in r[1:]] for r in body}
    for row in ROWS:
        assert got[row[0]][:-1] == row[1:-1], row[0]
        assert got[row[0]][-1] == row[-1], row[0]


def test_total_row():
    header, body = load()
    assert header == HEADER
    assert body[-1][0] == "TOTAL"
    assert [int(float(x)) for x in body[-1][1:]] == TOTAL[1:]
