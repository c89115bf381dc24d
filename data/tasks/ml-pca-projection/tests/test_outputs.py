import csv
import json

import numpy as np


def reference():
    rng = np.random.default_rng(123)
    latent = rng.normal(size=(250, 3)) * np.array([5.0, 2.5, 1.0])
    mix = rng.normal(size=(3, 6))
    X = latent @ mix + rng.normal(scale=0.3, size=(250, 6)) + np.array([10, -3, 0, 5, 100, 1])
    X = np.round(X, 4)
    Xc = X - X.mean(0)
    vals, vecs = np.linalg.eigh(np.cov(Xc, rowvar=False))
    order = np.argsort(vals)[::-1]
    comps = vecs[:, order[:2]].T.copy()
    for c in comps:
        if c[np.abs(c).argmax()] < 0:
            c *= -1
    return comps, vals[order[:2]] / vals.sum(), Xc @ comps.T


def load():
    with open("/app/pca.json") as f:
        return json.load(f)


def test_components():
    comps, _, _ = reference()
    got = np.array(load()["components"], dtype=float)
    assert got.shape == (2, 6)
    assert np.allclose(got, comps, atol=1e-6), got


def test_explained_variance():
    _, ratio, _ = reference()
    assert np.allclose(load()["explained_variance_ratio"], ratio, atol=1e-7)


def test_projection():
    _, _, proj = reference()
    with open("/app/projected.csv") as f:
        rows = list(csv.DictReader(f))
    got = np.array([[float(r["pc1"]), float(r["pc2"])] for r in rows])
    assert got.shape == (250, 2)
    assert np.allclose(got, proj, atol=1e-5)
