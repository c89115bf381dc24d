import importlib.util
import subprocess

import numpy as np


def load():
    spec = importlib.util.spec_from_file_location("spline", "/app/spline.py")
    m = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(m)
    return m.NaturalCubicSpline


def ref_coeffs(x, y):
    n = len(x)
    h = np.diff(x)
    A = np.zeros((n, n))
    r = np.zeros(n)
    A[0, 0] = A[-1, -1] = 1
    for i in range(1, n - 1):
        A[i, i - 1], A[i, i], A[i, i + 1] = h[i - 1], 2 * (h[i - 1] + h[i]), h[i]
        r[i] = 6 * ((y[i + 1] - y[i]) / h[i] - (y[i] - y[i - 1]) / h[i - 1])
    m = np.linalg.solve(A, r)
    b = np.diff(y) / h - h * (2 * m[:-1] + m[1:]) / 6
    return y[:-1], b, m[:-1] / 2, np.diff(m) / (6 * h)


def ref_eval(x, y, xq, der=False):
    a, b, c, d = ref_coeffs(x, y)
    i = np.clip(np.searchsorted(x, xq, side="right") - 1, 0, len(x) - 2)
    t = xq - x[i]
    if der:
        return b[i] + 2 * c[i] * t + 3 * d[i] * t * t
    return a[i] + b[i] * t + c[i] * t ** 2 + d[i] * t ** 3


def ref_integral(x, y, lo, hi):
    # integrate the exact piecewise cubic with Simpson on a grid that includes all knots (exact for cubics)
    pts = np.unique(np.concatenate([x[(x > min(lo, hi)) & (x < max(lo, hi))], [lo, hi]]))
    total = 0.0
    for p, q in zip(pts[:-1], pts[1:]):
        mid = (p + q) / 2
        total += (q - p) / 6 * (ref_eval(x, y, p) + 4 * ref_eval(x, y, mid) + ref_eval(x, y, q))
    return total if hi >= lo else -total


def test_values_and_knots():
    S = load()
    rng = np.random.default_rng(4)
    x = np.sort(rng.uniform(0, 10, 25))
    y = np.sin(x) + rng.normal(0, 0.1, 25)
    s = S(x, y)
    assert np.allclose(s(x), y, atol=1e-9, rtol=0)
    xq = np.linspace(x[0], x[-1], 777)
    got = s(xq)
    assert isinstance(got, np.ndarray) and got.shape == (777,)
    assert np.max(np.abs(got - ref_eval(x, y, xq))) < 1e-9
    assert isinstance(s(3.3), float) and abs(s(3.3) - ref_eval(x, y, np.array(3.3))) < 1e-9
    grid = xq.reshape(21, 37)
    assert s(grid).shape == (21, 37)
    line = S([1.0, 3.0], [2.0, 6.0])
    assert abs(line(2.0) - 4.0) < 1e-12 and abs(line(5.0) - 10.0) < 1e-12


def test_derivative_and_integral():
    S = load()
    x = np.array([0.0, 0.5, 1.7, 2.0, 3.5, 4.0, 6.25])
    y = np.array([1.0, -2.0, 0.5, 0.25, 3.0, 2.0, -1.0])
    s = S(x, y)
    xq = np.linspace(-0.5, 7, 301)
    assert np.max(np.abs(s.derivative(xq) - ref_eval(x, y, xq, der=True))) < 1e-9
    assert abs(s.derivative(1.0) - ref_eval(x, y, np.array(1.0), der=True)) < 1e-9
    for lo, hi in [(0.0, 6.25), (0.3, 3.9), (2.0, 2.0), (5.0, 1.1), (1.0, 1.5)]:
        assert abs(s.integral(lo, hi) - ref_integral(x, y, lo, hi)) < 1e-9, (lo, hi)


def test_large_and_extrapolation():
    code = """
import importlib.util, numpy as np, time
spec = importlib.util.spec_from_file_location("spline", "/app/spline.py")
m = importlib.util.module_from_spec(spec); spec.loader.exec_module(m)
x = np.cumsum(np.random.default_rng(1).uniform(0.1, 1.0, 100000))
y = np.cos(x / 50)
s = m.NaturalCubicSpline(x, y)
q = np.random.default_rng(2).uniform(x[0], x[-1], 1000)
np.save("/tmp/spline_big.npy", np.stack([q, s(q)]))
"""
    r = subprocess.run(["python3", "-c", code], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr[-1500:]
    q, v = np.load("/tmp/spline_big.npy")
    assert np.max(np.abs(v - np.cos(q / 50))) < 1e-6
    S = load()
    x = np.array([0.0, 1.0, 2.0, 4.0])
    y = np.array([0.0, 1.0, 0.0, 2.0])
    s = S(x, y)
    xq = np.array([-2.0, -0.1, 4.5, 9.0])
    assert np.max(np.abs(s(xq) - ref_eval(x, y, xq))) < 1e-9
    assert np.max(np.abs(s.derivative(xq) - ref_eval(x, y, xq, der=True))) < 1e-9
