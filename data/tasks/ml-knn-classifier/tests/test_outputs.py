import subprocess
import tempfile
from pathlib import Path

import numpy as np


def reference(X, y, T, k):
    mu, sd = X.mean(0), X.std(0)
    Xs, Ts = (X - mu) / sd, (T - mu) / sd
    out = []
    for t in Ts:
        d = np.sqrt(((Xs - t) ** 2).sum(1))
        idx = np.argsort(d, kind="stable")[:k]
        votes, first = {}, {}
        for rank, i in enumerate(idx):
            votes[y[i]] = votes.get(y[i], 0) + 1
            first.setdefault(y[i], rank)
        best = max(votes.values())
        out.append(min((first[l], l) for l, v in votes.items() if v == best)[1])
    return out


def run(X, y, T, k, names):
    with tempfile.TemporaryDirectory() as d:
        d = Path(d)
        (d / "tr.csv").write_text(",".join(names + ["species"]) + "\n" + "".join(
            ",".join(f"{v:.6f}" for v in row) + f",{lab}\n" for row, lab in zip(X, y)))
        (d / "te.csv").write_text(",".join(names) + "\n" + "".join(
            ",".join(f"{v:.6f}" for v in row) + "\n" for row in T))
        r = subprocess.run(["python3", "/app/knn.py", str(d / "tr.csv"), str(d / "te.csv"), str(d / "out.txt"), str(k)],
                           capture_output=True, text=True, timeout=60)
        assert r.returncode == 0, r.stderr
        return (d / "out.txt").read_text().split()


def blobs(seed, n_classes, n_feat, n_train, n_test, scales):
    rng = np.random.default_rng(seed)
    centers = rng.normal(scale=2.0, size=(n_classes, n_feat))
    labs = [f"class_{c}" for c in range(n_classes)]

    def draw(n):
        c = rng.integers(0, n_classes, size=n)
        return np.round((centers[c] + rng.normal(size=(n, n_feat))) * scales, 6), [labs[i] for i in c]
    X, y = draw(n_train)
    T, _ = draw(n_test)
    return X, y, T


def check(seed, n_classes, n_feat, k, scales):
    X, y, T = blobs(seed, n_classes, n_feat, 150, 120, np.array(scales))
    got = run(X, y, T, k, [f"f{i}" for i in range(n_feat)])
    want = reference(X, y, T, k)
    assert len(got) == len(want)
    agree = sum(a == b for a, b in zip(got, want))
    assert agree >= len(want) - 1, f"{agree}/{len(want)} predictions match the reference"


def test_two_class_k1():
    check(10, 2, 2, 1, [1.0, 1.0])


def test_multiclass_scaled():
    check(11, 4, 3, 7, [1000.0, 0.01, 1.0])


def test_vote_ties():
    check(12, 3, 2, 4, [50.0, 1.0])
    X = np.array([[0.0], [1.0], [3.0], [4.0], [10.0], [11.0]])
    y = ["b", "a", "a", "b", "c", "c"]
    T = np.array([[2.9], [0.4], [10.4]])
    assert run(X, y, T, 4, ["x"]) == ["a", "b", "c"]
