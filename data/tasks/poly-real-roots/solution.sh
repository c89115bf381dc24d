#!/bin/bash
set -e
cat > /app/roots.py <<'PY'
import sys

import numpy as np


def polish(c, x):
    d = np.polyder(c)
    for _ in range(50):
        fx, dx = np.polyval(c, x), np.polyval(d, x)
        if dx == 0:
            break
        step = fx / dx
        x -= step
        if abs(step) < 1e-15 * max(1.0, abs(x)):
            break
    return x


def main(path, a, b):
    c = np.array([float(t) for t in open(path).read().split()])
    c = np.trim_zeros(c, "f")
    out = []
    if len(c) > 1:
        for r in np.roots(c):
            if abs(r.imag) < 1e-6 * max(1.0, abs(r)):
                x = polish(c, float(r.real))
                if a - 1e-12 <= x <= b + 1e-12:
                    out.append(x)
    for x in sorted(out):
        print(f"{x:.12f}")


main(sys.argv[1], float(sys.argv[2]), float(sys.argv[3]))
PY
