import importlib.util
import subprocess

import numpy as np


def load():
    spec = importlib.util.spec_from_file_location("heat", "/app/heat.py")
    m = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(m)
    return m.crank_nicolson


def reference(u0, alpha, dx, dt, steps):
    u = np.array(u0, dtype=float)
    n = len(u) - 2
    r = alpha * dt / dx ** 2
    A = np.diag(np.full(n, 1 + r)) + np.diag(np.full(n - 1, -r / 2), 1) + np.diag(np.full(n - 1, -r / 2), -1)
    for _ in range(steps):
        d = r / 2 * u[:-2] + (1 - r) * u[1:-1] + r / 2 * u[2:]
        d[0] += r / 2 * u[0]
        d[-1] += r / 2 * u[-1]
        u[1:-1] = np.linalg.solve(A, d)
    return u


def test_matches_scheme():
    cn = load()
    rng = np.random.default_rng(0)
    for N, alpha, dx, dt, steps, lo, hi in [(12, 1.0, 0.1, 0.004, 7, 0.0, 0.0), (40, 0.3, 0.05, 0.02, 25, 1.5, -2.0),
                                            (3, 2.0, 0.5, 0.1, 4, 1.0, 3.0), (60, 1e-3, 1e-2, 5.0, 60, 10.0, 20.0)]:
        u0 = rng.normal(size=N)
        u0[0], u0[-1] = lo, hi
        keep = u0.copy()
        got = cn(u0, alpha, dx, dt, steps)
        assert np.array_equal(u0, keep), "u0 was modified"
        assert isinstance(got, np.ndarray) and got.shape == (N,)
        assert np.max(np.abs(got - reference(u0, alpha, dx, dt, steps))) < 1e-9
        assert got[0] == lo and got[-1] == hi


def test_stable_and_accurate():
    cn = load()
    N, L, alpha = 201, 1.0, 0.5
    x = np.linspace(0, L, N)
    dx = x[1] - x[0]
    u0 = np.sin(np.pi * x) + 0.5 * np.sin(3 * np.pi * x)
    u0[0] = u0[-1] = 0.0
    dt, steps = 0.002, 100   # r = 40: explicit schemes explode here
    u = cn(u0, alpha, dx, dt, steps)
    t = dt * steps
    exact = np.exp(-alpha * np.pi ** 2 * t) * np.sin(np.pi * x) + 0.5 * np.exp(-9 * alpha * np.pi ** 2 * t) * np.sin(3 * np.pi * x)
    assert np.all(np.isfinite(u))
    assert np.max(np.abs(u - exact)) < 2e-4
    # non-zero boundaries relax to the straight line between them
    u = cn(np.r_[1.0, np.zeros(49), 3.0], 1.0, 0.02, 0.01, 2000)
    assert np.max(np.abs(u - np.linspace(1, 3, 51))) < 1e-6


def test_large_grid_fast():
    code = """
import importlib.util, numpy as np
spec = importlib.util.spec_from_file_location("heat", "/app/heat.py")
m = importlib.util.module_from_spec(spec); spec.loader.exec_module(m)
N = 3000
x = np.linspace(0, 1, N)
u0 = np.exp(-200 * (x - 0.4) ** 2); u0[0] = 0.2; u0[-1] = -0.1
u = m.crank_nicolson(u0, 0.7, x[1] - x[0], 1e-5, 3000)
np.save("/tmp/heat_big.npy", u)
"""
    r = subprocess.run(["python3", "-c", code], capture_output=True, text=True, timeout=150)
    assert r.returncode == 0, r.stderr[-1500:]
    u = np.load("/tmp/heat_big.npy")
    N = 3000
    x = np.linspace(0, 1, N)
    u0 = np.exp(-200 * (x - 0.4) ** 2)
    u0[0], u0[-1] = 0.2, -0.1
    n = N - 2
    r_ = 0.7 * 1e-5 / (x[1] - x[0]) ** 2
    steady = 0.2 + (-0.3) * np.arange(N) / (N - 1)
    k = np.arange(1, n + 1)
    S = np.sqrt(2.0 / (n + 1)) * np.sin(np.pi * np.outer(k, k) / (n + 1))
    mu = 2 - 2 * np.cos(np.pi * k / (n + 1))
    lam = (1 - r_ / 2 * mu) / (1 + r_ / 2 * mu)
    want = steady.copy()
    want[1:-1] += S @ (lam ** 3000 * (S @ (u0[1:-1] - steady[1:-1])))
    assert np.max(np.abs(u - want)) < 1e-8
