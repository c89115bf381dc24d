import json
import subprocess

import numpy as np


def make(n, sample_seed):
    w_rng = np.random.default_rng(2718)
    w = w_rng.normal(size=12)
    scales = 10.0 ** w_rng.integers(-2, 4, size=12)
    offsets = w_rng.normal(scale=50, size=12)
    rng = np.random.default_rng(sample_seed)
    Z = rng.normal(size=(n, 12))
    y = (Z @ w + rng.normal(scale=2.0, size=n) > 0.3).astype(int)
    return np.round(Z * scales + offsets, 5), y


_trained = {}


def train():
    if not _trained:
        r = subprocess.run(["python3", "/app/train.py"], cwd="/", capture_output=True, text=True, timeout=90)
        assert r.returncode == 0, r.stderr[-2000:]
        m = np.load("/app/model.npz")
        _trained["m"] = {k: m[k] for k in ("w", "b", "mean", "std")}
        _trained["log"] = json.load(open("/app/train_log.json"))
    return _trained["m"], _trained["log"]


def sigmoid(z):
    return 1.0 / (1.0 + np.exp(-z))


def val_split():
    data = np.loadtxt("/app/data/train.csv", delimiter=",", skiprows=1)
    X, y = data[:, :-1], data[:, -1]
    order = np.random.default_rng(0).permutation(len(X))
    return X[order[:len(X) // 5]], y[order[:len(X) // 5]]


def test_heldout_accuracy():
    m, _ = train()
    X, y = make(4000, 99)
    pred = (sigmoid(((X - m["mean"]) / m["std"]) @ m["w"] + m["b"]) > 0.5).astype(int)
    acc = (pred == y).mean()
    assert acc >= 0.82, acc


def test_best_weights_restored():
    m, log = train()
    X, y = val_split()
    p = np.clip(sigmoid(((X - m["mean"]) / m["std"]) @ m["w"] + m["b"]), 1e-12, 1 - 1e-12)
    loss = float(-np.mean(y * np.log(p) + (1 - y) * np.log(1 - p)))
    hist = log["val_loss"]
    assert log["best_epoch"] == int(np.argmin(hist))
    assert abs(loss - min(hist)) < 1e-9, (loss, min(hist))
    assert min(hist) < 0.34, min(hist)


def test_early_stopping_rule():
    _, log = train()
    hist, best = log["val_loss"], log["best_epoch"]
    assert len(hist) == 200 or len(hist) == best + 6, (len(hist), best)
    # no epoch before the stop may be followed by 5 non-improving epochs
    running, streak = float("inf"), 0
    for i, v in enumerate(hist[:-1]):
        if v < running:
            running, streak = v, 0
        else:
            streak += 1
        assert streak < 5, f"training should have stopped at epoch {i}"
    assert 8 <= len(hist) <= 200 and min(hist) < 0.34, (len(hist), min(hist))
