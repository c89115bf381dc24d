import subprocess

import numpy as np


def run(tmp_path, coeffs, a, b):
    p = tmp_path / "c.txt"
    p.write_text(" ".join(repr(float(c)) for c in coeffs) + "\n")
    r = subprocess.run(["python3", "/app/roots.py", str(p), str(a), str(b)], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr[-1500:]
    return [float(x) for x in r.stdout.split()]


def check(got, want):
    assert len(got) == len(want), (got, want)
    for g, w in zip(got, want):
        assert abs(g - w) < 1e-9, (g, w)


def test_cubic_example():
    r = subprocess.run(["python3", "/app/roots.py", "/app/cubic.txt", "0", "10"], capture_output=True, text=True, timeout=60)
    assert r.stdout.split() == ["1.000000000000", "2.000000000000", "3.000000000000"]


def test_hidden_polynomials(tmp_path):
    rng = np.random.default_rng(17)
    for deg in (2, 5, 8, 12):
        roots = np.sort(rng.uniform(-5, 5, size=deg))
        while np.min(np.diff(roots)) < 0.05:
            roots = np.sort(rng.uniform(-5, 5, size=deg))
        coeffs = np.poly(roots) * rng.uniform(0.5, 3)
        a, b = -2.5, 4.0
        check(run(tmp_path, coeffs, a, b), [r for r in roots if a <= r <= b])
    # complex pair + two real roots: (x^2 + 1)(x - 0.25)(x + 7.5)
    coeffs = np.polymul([1, 0, 1], np.poly([0.25, -7.5]))
    check(run(tmp_path, coeffs, -10, 10), [-7.5, 0.25])
    check(run(tmp_path, coeffs, 0.3, 10), [])
    # close roots and a large scale
    coeffs = np.poly([12.0, 12.01, -0.001, 3.7])
    check(run(tmp_path, coeffs, -1, 20), [-0.001, 3.7, 12.0, 12.01])
    check(run(tmp_path, [2, -3], -1, 1), [])
    check(run(tmp_path, [2, -3], 1, 2), [1.5])
