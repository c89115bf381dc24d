import json
import math
import subprocess

import numpy as np


def expm_chain(half_lives, n0, t):
    lams = [0.0 if h is None else math.log(2) / h for h in half_lives]
    n = len(lams)
    A = np.zeros((n, n))
    for i, lam in enumerate(lams):
        A[i, i] = -lam
        if i + 1 < n:
            A[i + 1, i] = lam
    c = max(lams)
    B = (A + c * np.eye(n)) * t
    norm = np.abs(B).sum(axis=0).max()
    sq = max(0, int(math.ceil(math.log2(norm / 0.125)))) if norm > 0.125 else 0
    B = B / 2 ** sq
    E, term = np.eye(n), np.eye(n)
    for k in range(1, 40):
        term = term @ B / k
        E = E + term
    E = E * math.exp(-c * t / 2 ** sq)
    for _ in range(sq):
        E = E @ E
    return E @ np.array(n0, dtype=float)


def run(tmp_path, half_lives, n0, times):
    p = tmp_path / "c.json"
    p.write_text(json.dumps({"half_lives": half_lives, "initial": n0, "times": times}))
    r = subprocess.run(["python3", "/app/decay.py", str(p)], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr[-1500:]
    rows = [[float(v) for v in line.split()] for line in r.stdout.splitlines()]
    assert len(rows) == len(times)
    return rows


def check(rows, times, want_fn, total):
    for row, t in zip(rows, times):
        assert row[0] == float(t)
        want = want_fn(t)
        assert len(row) == len(want) + 1
        for got, w in zip(row[1:], want):
            assert abs(got - w) <= max(1e-6 * abs(w), 1e-10 * total), (t, row[1:], list(want))


def check_distinct(tmp_path):
    rows = run(tmp_path, [10.0, 2.0, None], [1000.0, 0.0, 0.0], [0, 1, 5, 20, 100])
    l1, l2 = math.log(2) / 10, math.log(2) / 2

    def exact(t):
        n1 = 1000 * math.exp(-l1 * t)
        n2 = 1000 * l1 / (l2 - l1) * (math.exp(-l1 * t) - math.exp(-l2 * t))
        return [n1, n2, 1000 - n1 - n2]
    check(rows, [0, 1, 5, 20, 100], exact, 1000)
    hl, n0, times = [5000.0, 3.0, 700.0, 0.5, 42.0], [1e6, 10.0, 0.0, 5e3, 1.0], [0.25, 10, 1e3, 1e5, 1e6]
    check(run(tmp_path, hl, n0, times), times, lambda t: expm_chain(hl, n0, t), sum(n0))


def test_equal_half_lives(tmp_path):
    times = [0.5, 3.0, 12.0, 60.0]
    rows = run(tmp_path, [3.0, 3.0, 3.0, None], [1.0e9, 0.0, 0.0, 0.0], times)
    lam = math.log(2) / 3

    def exact(t):
        e = math.exp(-lam * t)
        a, b, c = 1e9 * e, 1e9 * lam * t * e, 1e9 * (lam * t) ** 2 / 2 * e
        return [a, b, c, 1e9 - a - b - c]
    check(rows, times, exact, 1e9)
    check_distinct(tmp_path)
    hl, n0, times = [7.0, 1.0, 7.0, 1.0, 7.0, None], [100.0, 0.0, 50.0, 0.0, 0.0, 3.0], [1.0, 8.0, 30.0, 200.0]
    check(run(tmp_path, hl, n0, times), times, lambda t: expm_chain(hl, n0, t), sum(n0))


def test_nearly_equal_and_stiff(tmp_path):
    hl = [2.0, 2.0 * (1 + 1e-9), 2.0 * (1 - 1e-9), 2.0 * (1 + 3e-12), None]
    n0, times = [1e6, 0.0, 0.0, 0.0, 0.0], [0.1, 2.0, 9.0, 40.0, 400.0]
    check(run(tmp_path, hl, n0, times), times, lambda t: expm_chain(hl, n0, t), 1e6)
    check_distinct(tmp_path)
    hl = [1e5, 0.01, 3e4, 0.05, 30.0, 30.0 * (1 + 1e-10), 1.0, 2e3, 0.2, 9e4, 0.02, None]
    n0 = [1e12, 0.0, 5e8, 0.0, 0.0, 1e3, 0.0, 0.0, 0.0, 7.0, 0.0, 0.0]
    times = [0.0, 0.001, 1.0, 100.0, 1e4, 1e6]
    check(run(tmp_path, hl, n0, times), times, lambda t: expm_chain(hl, n0, t), sum(n0))
