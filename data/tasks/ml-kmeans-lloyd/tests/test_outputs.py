import json
import subprocess
import tempfile
from pathlib import Path

import numpy as np


def reference(X, k):
    C = X[:k].copy()
    labels = None
    for _ in range(300):
        d = ((X[:, None, :] - C[None, :, :]) ** 2).sum(-1)
        new = d.argmin(1)
        if labels is not None and (new == labels).all():
            break
        labels = new
        for j in range(k):
            if (labels == j).any():
                C[j] = X[labels == j].mean(0)
    return labels.tolist(), C, float(((X - C[labels]) ** 2).sum())


def run(X, k):
    with tempfile.TemporaryDirectory() as d:
        d = Path(d)
        (d / "p.csv").write_text("".join(",".join(repr(float(v)) for v in row) + "\n" for row in X))
        r = subprocess.run(["python3", "/app/kmeans.py", str(d / "p.csv"), str(k), str(d / "o.json")],
                           capture_output=True, text=True, timeout=60)
        assert r.returncode == 0, r.stderr
        return json.loads((d / "o.json").read_text())


def data(seed, n, dim, k):
    rng = np.random.default_rng(seed)
    centers = rng.normal(scale=3, size=(k, dim))
    return centers[rng.integers(0, k, n)] + rng.normal(size=(n, dim))


def test_small_example():
    X = np.array([[1.0, 1.0], [5.0, 5.0], [1.2, 0.8], [4.8, 5.3], [0.9, 1.1], [5.1, 4.9]])
    out = run(X, 2)
    assert out["labels"] == [0, 1, 0, 1, 0, 1]
    assert np.allclose(out["centroids"], [[31 / 30, 29 / 30], [4.9666666666666667, 5.066666666666666]])


def test_labels_match_reference():
    for seed, n, dim, k in ((1, 300, 2, 4), (2, 500, 5, 6), (3, 200, 3, 3)):
        X = data(seed, n, dim, k)
        labels, _, _ = reference(X, k)
        assert run(X, k)["labels"] == labels, (seed, n, dim, k)


def test_centroids_inertia_empty_cluster():
    X = data(4, 400, 4, 5)
    labels, C, inertia = reference(X, 5)
    out = run(X, 5)
    assert np.allclose(out["centroids"], C, atol=1e-6)
    assert abs(out["inertia"] - inertia) <= 1e-6 * inertia
    # the duplicated first row leaves centroid 1 empty after the first assignment (tie -> lower index)
    X = np.array([[0.0, 0.0], [0.0, 0.0], [10.0, 10.0], [10.5, 10.0], [9.5, 10.0]])
    labels, C, inertia = reference(X, 3)
    out = run(X, 3)
    assert out["labels"] == labels == [0, 0, 2, 2, 2]
    assert np.allclose(out["centroids"], C) and np.allclose(C[1], [0.0, 0.0])
    assert abs(out["inertia"] - inertia) < 1e-9
