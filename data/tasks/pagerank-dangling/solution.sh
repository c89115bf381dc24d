#!/bin/bash
set -e
cat > /app/pagerank.py <<'PY'
import sys

import numpy as np


def main(path):
    names, edges = {}, set()
    for line in open(path):
        parts = line.split()
        if not parts:
            continue
        u, v = parts
        for x in (u, v):
            names.setdefault(x, len(names))
        if u != v:
            edges.add((names[u], names[v]))
    n = len(names)
    d = 0.85
    src = np.array([e[0] for e in edges], dtype=np.int64)
    dst = np.array([e[1] for e in edges], dtype=np.int64)
    outdeg = np.bincount(src, minlength=n).astype(float)
    dangling = outdeg == 0
    pr = np.full(n, 1.0 / n)
    w = np.where(outdeg[src] > 0, 1.0 / np.maximum(outdeg[src], 1), 0.0)
    for _ in range(10000):
        new = np.full(n, (1 - d) / n) + d * pr[dangling].sum() / n
        new += d * np.bincount(dst, weights=pr[src] * w, minlength=n)
        new /= new.sum()
        if np.abs(new - pr).sum() < 1e-15:
            pr = new
            break
        pr = new
    inv = {i: s for s, i in names.items()}
    for i in sorted(range(n), key=lambda i: (-float(f"{pr[i]:.10f}"), inv[i])):
        print(f"{inv[i]} {pr[i]:.10f}")


main(sys.argv[1])
PY
