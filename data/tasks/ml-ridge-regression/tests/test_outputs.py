import csv
import json
import sys

import numpy as np

sys.path.insert(0, "/tests")


def reference():
    rng = np.random.default_rng(42)
    n, d = 80, 8
    base = rng.normal(size=(n + 40, 3))
    X = np.column_stack([base, base @ rng.normal(size=(3, d - 3)) + 0.05 * rng.normal(size=(n + 40, d - 3))])
    X = np.round(X * 10 + 50, 3)
    w = rng.normal(size=d)
    y = np.round(X @ w + 7.5 + rng.normal(scale=2.0, size=n + 40), 3)
    Xt, yt, T = X[:n], y[:n], X[n:]
    mx, my = Xt.mean(0), yt.mean()
    Xc = Xt - mx
    w = np.linalg.solve(Xc.T @ Xc + 10 * np.eye(d), Xc.T @ (yt - my))
    b = my - mx @ w
    return w, b, T @ w + b


def model():
    with open("/app/model.json") as f:
        return json.load(f)


def test_coefficients():
    w, _, _ = reference()
    got = model()["coef"]
    assert set(got) == {f"x{i}" for i in range(1, 9)}
    assert np.allclose([got[f"x{i}"] for i in range(1, 9)], w, rtol=1e-4, atol=1e-6), (got, w)


def test_intercept():
    _, b, _ = reference()
    assert abs(model()["intercept"] - b) <= 1e-4 * max(1.0, abs(b)), (model()["intercept"], b)


def test_predictions():
    _, _, pred = reference()
    rows = list(csv.DictReader(open("/app/predictions.csv")))
    assert [int(r["id"]) for r in rows] == list(range(40))
    assert np.allclose([float(r["y"]) for r in rows], pred, rtol=1e-5, atol=1e-4)
