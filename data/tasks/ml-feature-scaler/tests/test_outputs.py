import json
import math
import random

FEATS = ["age", "income", "hours_per_week", "tenure_years"]


def data():
    rng = random.Random(11)
    cols = {c: [] for c in FEATS}
    for _ in range(300):
        age, inc, _lab, hours, ten = (rng.randint(18, 70), float(f"{rng.gauss(52000, 15000):.2f}"),
                                      rng.randint(0, 1), float(f"{rng.gauss(38, 8):.1f}"),
                                      float(f"{rng.uniform(0, 20):.3f}"))
        for c, v in zip(FEATS, (age, inc, hours, ten)):
            cols[c].append(v)
    return cols


def load():
    with open("/app/scaler.json") as f:
        return json.load(f)


def check(stat):
    s = load()
    assert set(s) == {"mean", "std"}
    assert set(s["mean"]) == set(FEATS) and set(s["std"]) == set(FEATS)
    for c, vals in data().items():
        m = sum(vals) / len(vals)
        want = m if stat == "mean" else math.sqrt(sum((v - m) ** 2 for v in vals) / len(vals))
        assert math.isclose(s[stat][c], want, rel_tol=1e-6), (stat, c, s[stat][c], want)


def test_scaler_mean():
    check("mean")


def test_scaler_std():
    check("std")
