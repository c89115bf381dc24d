#!/bin/bash
set -e
cat > /app/bernoulli.py <<'PY'
import sys
from fractions import Fraction
from math import comb


def bernoulli_list(n):
    b = [Fraction(0)] * (n + 1)
    b[0] = Fraction(1)
    for m in range(1, n + 1):
        b[m] = -sum(comb(m + 1, k) * b[k] for k in range(m)) / (m + 1)
    return b


def power_sum(p, n):
    b = bernoulli_list(p)
    s = sum(comb(p + 1, j) * (-b[j] if j == 1 else b[j]) * n ** (p + 1 - j) for j in range(p + 1))
    return s / (p + 1)


if sys.argv[1] == "bernoulli":
    f = bernoulli_list(int(sys.argv[2]))[-1]
    print(f"{f.numerator}/{f.denominator}")
else:
    print(power_sum(int(sys.argv[2]), int(sys.argv[3])).numerator)
PY
