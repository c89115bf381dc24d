import csv
import json
import math
from pathlib import Path

SUMMARY = {'lathe-1': {'q1': 7.97, 'q3': 8.94, 'iqr': 0.9699999999999998, 'lower_fence': 6.515000000000001, 'upper_fence': 10.395}, 'lathe-2': {'q1': 287.07, 'q3': 317.19, 'iqr': 30.120000000000005, 'lower_fence': 241.89, 'upper_fence': 362.37}, 'press-A': {'q1': 47.555, 'q3': 53.78, 'iqr': 6.225000000000001, 'lower_fence': 38.2175, 'upper_fence': 63.11750000000001}, 'press-B': {'q1': 109.86, 'q3': 122.16499999999999, 'iqr': 12.304999999999993, 'lower_fence': 91.4025, 'upper_fence': 140.62249999999997}}
OUTLIERS = [('R0009', 'press-A', 18.91, 'low'), ('R0019', 'press-A', 26.88, 'low'), ('R0026', 'press-A', 74.72, 'high'), ('R0074', 'lathe-1', 13.15, 'high'), ('R0081', 'lathe-1', 4.61, 'low'), ('R0083', 'lathe-1', 4.62, 'low'), ('R0090', 'lathe-1', 3.87, 'low'), ('R0094', 'lathe-1', 11.51, 'high'), ('R0101', 'lathe-1', 5.35, 'low'), ('R0104', 'lathe-2', 433.25, 'high'), ('R0107', 'lathe-2', 379.12, 'high'), ('R0116', 'lathe-2', 404.99, 'high'), ('R0122', 'lathe-2', 487.46, 'high')]


def test_summary_quartiles():
    got = json.loads(Path("/app/summary.json").read_text())
    assert sorted(got) == sorted(SUMMARY)
    for m, want in SUMMARY.items():
        for k, v in want.items():
            assert math.isclose(float(got[m][k]), v, abs_tol=1e-6), (m, k, got[m][k], v)


def test_outlier_rows():
    rows = list(csv.DictReader(Path("/app/outliers.csv").read_text().splitlines()))
    assert rows is not None
    got = sorted((r["reading_id"], r["machine"], float(r["value"]), r["side"]) for r in rows)
    assert got == OUTLIERS
