import sys

import numpy as np

sys.path.insert(0, "/app")


def spiral(n_per_class, seed, noise=0.25):
    rng = np.random.default_rng(seed)
    X, y = [], []
    for c in range(3):
        r = np.linspace(0.05, 1.0, n_per_class)
        t = np.linspace(c * 4.0, (c + 1) * 4.0, n_per_class) + rng.normal(scale=noise, size=n_per_class)
        X.append(np.column_stack([r * np.sin(t), r * np.cos(t)]))
        y.append(np.full(n_per_class, c))
    return np.concatenate(X), np.concatenate(y)


def rand_params(rng, n_in=3, h=5, n_out=4):
    return {"W1": rng.normal(size=(n_in, h)), "b1": rng.normal(size=h),
            "W2": rng.normal(size=(h, n_out)), "b2": rng.normal(size=n_out)}


def ref_probs(p, X):
    Z = np.tanh(X @ p["W1"] + p["b1"]) @ p["W2"] + p["b2"]
    Z = Z - Z.max(1, keepdims=True)
    return np.exp(Z) / np.exp(Z).sum(1, keepdims=True)


def test_forward_probabilities():
    import mlp
    rng = np.random.default_rng(5)
    p = rand_params(rng)
    X = rng.normal(size=(7, 3))
    got = np.asarray(mlp.forward(p, X))
    assert got.shape == (7, 4)
    assert np.allclose(got, ref_probs(p, X), atol=1e-10)
    big = {k: v * 200 for k, v in p.items()}  # must not overflow
    assert np.allclose(np.asarray(mlp.forward(big, X)), ref_probs(big, X), atol=1e-8)


def test_gradient_check():
    import mlp
    rng = np.random.default_rng(6)
    p = rand_params(rng)
    X, y = rng.normal(size=(9, 3)), rng.integers(0, 4, 9)
    loss, grads = mlp.loss_and_grads({k: v.copy() for k, v in p.items()}, X, y)
    want = float(-np.log(ref_probs(p, X)[np.arange(9), y]).mean())
    assert abs(loss - want) < 1e-9, (loss, want)
    eps = 1e-6
    for k, v in p.items():
        g = np.asarray(grads[k])
        assert g.shape == v.shape, k
        num = np.zeros_like(v)
        for idx in np.ndindex(v.shape):
            for sign in (1, -1):
                q = {kk: vv.copy() for kk, vv in p.items()}
                q[k][idx] += sign * eps
                num[idx] += sign * float(-np.log(ref_probs(q, X)[np.arange(9), y]).mean())
        num /= 2 * eps
        assert np.allclose(g, num, atol=1e-6, rtol=1e-5), (k, g, num)


def test_heldout_accuracy():
    w = np.load("/app/mlp_weights.npz")
    p = {k: w[k] for k in ("W1", "b1", "W2", "b2")}
    assert p["W1"].shape[0] == 2 and p["W2"].shape[1] == 3 and p["W1"].shape[1] <= 256
    X, y = spiral(400, 1234)
    acc = (ref_probs(p, X).argmax(1) == y).mean()
    assert acc >= 0.90, acc
