import math
import subprocess

import numpy as np


def reference(L, T, H, sweeps, burn, seed):
    rng = np.random.default_rng(seed)
    s = np.ones((L, L), dtype=int)
    N = L * L
    ms, es, acc = [], [], 0
    for k in range(sweeps):
        for _ in range(N):
            r = int(rng.integers(L))
            c = int(rng.integers(L))
            nb = s[(r - 1) % L, c] + s[(r + 1) % L, c] + s[r, (c - 1) % L] + s[r, (c + 1) % L]
            dE = 2 * s[r, c] * (nb + H)
            if dE <= 0 or rng.random() < math.exp(-dE / T):
                s[r, c] *= -1
                acc += 1
        if k >= burn:
            M = s.sum()
            bonds = (s * np.roll(s, 1, 0)).sum() + (s * np.roll(s, 1, 1)).sum()
            ms.append(abs(M) / N)
            es.append((-bonds - H * M) / N)
    return [f"m {sum(ms) / len(ms):.10f}", f"e {sum(es) / len(es):.10f}", f"acc {acc / (sweeps * N):.10f}"]


def run(*args):
    r = subprocess.run(["python3", "/app/ising.py", *map(str, args)], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr[-1500:]
    return r.stdout.split("\n")[:3]


def test_small_runs_exact():
    for args in [(4, 2.0, 0.0, 30, 10, 1), (5, 1.5, 0.3, 40, 0, 123), (6, 3.5, -0.2, 25, 5, 7)]:
        assert run(*args) == reference(*args), args


def test_physics_and_field():
    args = (8, 1.2, 0.0, 120, 40, 2024)
    got = run(*args)
    assert got == reference(*args)
    m = float(got[0].split()[1])
    assert m > 0.9       # well below T_c = 2.269: ordered
    args = (8, 6.0, 0.0, 120, 40, 5)
    got = run(*args)
    assert got == reference(*args)
    assert float(got[0].split()[1]) < 0.35   # well above T_c: disordered
    big = run(16, 2.5, 0.1, 1000, 200, 31)
    assert len(big) == 3 and big[0].startswith("m ")
