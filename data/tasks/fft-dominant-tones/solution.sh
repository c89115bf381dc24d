#!/bin/bash
set -e
cat > /app/tones.py <<'PY'
import sys

import numpy as np


def main(path, k):
    lines = open(path).read().splitlines()
    fs = float(lines[0].split("=", 1)[1])
    x = np.array([float(v) for v in lines[1:] if v.strip()])
    n = len(x)
    X = np.fft.rfft(x - x.mean())
    amp = 2 * np.abs(X) / n
    bins = np.arange(len(X))
    ok = (bins > 0) & (2 * bins < n)
    order = sorted(bins[ok], key=lambda b: -amp[b])[:k]
    for b in order:
        print(f"{b * fs / n:.3f} {amp[b]:.4f}")


main(sys.argv[1], int(sys.argv[2]))
PY
