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


def test_scaler_keys():
    s = load()
    assert set(s) == {"mean", "std"}
    assert set(s["mean"]) == set(FEATS) and set(s["std"]) == set(FEATS)


def test_scaler_values():
    s = load()
    for c, vals in data().items():
        m = sum(vals) / len(vals)
        sd = math.sqrt(sum((v - m) ** 2 for v in vals) / len(vals))
        assert math.isclose(s["mean"][c], m, rel_tol=1e-6), (c, s["mean"][c], m)
        assert math.isclose(s["std"][c], sd, rel_tol=1e-6), (c, s["std"][c], sd)
