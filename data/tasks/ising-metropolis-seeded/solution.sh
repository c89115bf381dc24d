#!/bin/bash
set -e
cat > /app/ising.py <<'PY'
import math
import sys

import numpy as np


def main(L, T, H, sweeps, burn, seed):
    rng = np.random.default_rng(seed)
    s = [[1] * L for _ in range(L)]
    N = L * L
    ms, es = [], []
    accepted = 0
    boltz = {}
    for k in range(sweeps):
        for _ in range(N):
            r = int(rng.integers(L))
            c = int(rng.integers(L))
            nb = s[(r - 1) % L][c] + s[(r + 1) % L][c] + s[r][(c - 1) % L] + s[r][(c + 1) % L]
            dE = 2 * s[r][c] * (nb + H)
            if dE <= 0:
                s[r][c] = -s[r][c]
                accepted += 1
            else:
                if dE not in boltz:
                    boltz[dE] = math.exp(-dE / T)
                if rng.random() < boltz[dE]:
                    s[r][c] = -s[r][c]
                    accepted += 1
        if k >= burn:
            M = sum(map(sum, s))
            bonds = sum(s[r][c] * (s[(r + 1) % L][c] + s[r][(c + 1) % L]) for r in range(L) for c in range(L))
            ms.append(abs(M) / N)
            es.append((-bonds - H * M) / N)
    print(f"m {sum(ms) / len(ms):.10f}")
    print(f"e {sum(es) / len(es):.10f}")
    print(f"acc {accepted / (sweeps * N):.10f}")


a = sys.argv[1:]
main(int(a[0]), float(a[1]), float(a[2]), int(a[3]), int(a[4]), int(a[5]))
PY
