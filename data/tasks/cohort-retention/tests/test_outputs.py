import csv
import math
from pathlib import Path

EXPECTED = {'2024-W01': (30, [0.8, 0.7, 0.6, 0.5, 0.26666666666666666, 0.16666666666666666]), '2024-W02': (21, [0.9047619047619048, 0.6190476190476191, 0.7142857142857143, 0.5238095238095238, 0.5714285714285714, 0.38095238095238093]), '2024-W03': (13, [0.9230769230769231, 0.5384615384615384, 0.6153846153846154, 0.6153846153846154, 0.3076923076923077, 0.46153846153846156]), '2024-W04': (27, [0.8888888888888888, 0.7037037037037037, 0.6296296296296297, 0.4074074074074074, 0.2962962962962963, 0.2222222222222222]), '2024-W05': (24, [0.7916666666666666, 0.625, 0.5833333333333334, 0.4583333333333333, 0.25, 0.08333333333333333]), '2024-W06': (20, [0.9, 0.75, 0.7, 0.5, 0.35, 0.45]), '2024-W07': (19, [0.9473684210526315, 0.8421052631578947, 0.7894736842105263, 0.5789473684210527, 0.15789473684210525, 0.26666666666666666]), '2024-W08': (25, [0.8, 0.72, 0.64, 0.48, 0.3, None]), '2024-W09': (24, [0.75, 0.4583333333333333, 0.4583333333333333, 0.21052631578947367, None, None]), '2024-W10': (25, [0.8, 0.64, 0.391304347826087, None, None, None]), '2024-W11': (37, [0.918918918918919, 0.8529411764705882, None, None, None, None]), '2024-W12': (27, [0.88, None, None, None, None, None]), '2024-W13': (8, [None, None, None, None, None, None])}  # cohort -> (size, [w0..w5] or None)


def load():
    rows = list(csv.DictReader(Path("/app/retention.csv").read_text().splitlines()))
    assert rows and list(rows[0]) == ["cohort", "size", "w0", "w1", "w2", "w3", "w4", "w5"]
    return rows


def test_cohorts_and_sizes():
    rows = load()
    assert [(r["cohort"], int(r["size"])) for r in rows] == [(c, n) for c, (n, _) in EXPECTED.items()]


def test_retention_cells():
    rows = load()
    assert [r["cohort"] for r in rows] == list(EXPECTED)
    for r in rows:
        for k, want in enumerate(EXPECTED[r["cohort"]][1]):
            cell = r[f"w{k}"].strip()
            if want is None:
                assert cell == "", (r["cohort"], k, cell)
            else:
                assert cell != "" and math.isclose(float(cell), want, abs_tol=6e-5), (r["cohort"], k, cell, want)
