import json
import math
from pathlib import Path

EXPECTED = {
    "s-01": {
        "count": 50,
        "max": 22.51,
        "mean": 21.5208,
        "median": 21.58,
        "min": 20.74,
        "stdev": 0.35912501376290135
    },
    "s-02": {
        "count": 54,
        "max": 22.13,
        "mean": 18.95611111111111,
        "median": 18.79,
        "min": 16.13,
        "stdev": 1.2569421065106763
    },
    "s-03": {
        "count": 72,
        "max": 27.61,
        "mean": 25.366805555555555,
        "median": 25.28,
        "min": 22.42,
        "stdev": 0.8928855365483035
    },
    "s-04": {
        "count": 48,
        "max": 2.36,
        "mean": -4.264166666666667,
        "median": -3.995,
        "min": -9.8,
        "stdev": 2.7446526992893494
    }
}


def load():
    return json.loads(Path("/app/stats.json").read_text())


def close(a, b):
    return math.isclose(float(a), b, abs_tol=1e-4)


def test_sensors_and_counts():
    got = load()
    assert sorted(got) == sorted(EXPECTED)
    assert {k: int(v["count"]) for k, v in got.items()} == {k: v["count"] for k, v in EXPECTED.items()}


def test_mean_median():
    got = load()
    for k, e in EXPECTED.items():
        assert close(got[k]["mean"], e["mean"]), k
        assert close(got[k]["median"], e["median"]), k


def test_stdev_min_max():
    got = load()
    for k, e in EXPECTED.items():
        for f in ("stdev", "min", "max"):
            assert close(got[k][f], e[f]), (k, f)
