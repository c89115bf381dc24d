#!/bin/bash
set -e
cat > /app/pell.py <<'PY'
import sys
from math import isqrt


def pell(d, target):
    """Smallest positive (x, y) with x^2 - d*y^2 = target (target is 1 or -1), or None."""
    a0 = isqrt(d)
    if a0 * a0 == d:
        return None
    m, q, a = 0, 1, a0
    p_prev, p = 1, a0
    q_prev, qq = 0, 1
    period = 0
    while True:
        m = q * a - m
        q = (d - m * m) // q
        a = (a0 + m) // q
        period += 1
        if a == 2 * a0:
            break
        p_prev, p = p, a * p + p_prev
        q_prev, qq = qq, a * qq + q_prev
    # (p, qq) is the convergent h_{period-1}
    x, y = p, qq
    if target == -1:
        return (x, y) if period % 2 == 1 else None
    if period % 2 == 1:
        x, y = x * x + d * y * y, 2 * x * y
    return x, y


if __name__ == "__main__":
    d = int(sys.argv[1])
    target = int(sys.argv[2]) if len(sys.argv) > 2 else 1
    s = pell(d, target)
    print("none" if s is None else f"{s[0]} {s[1]}")
PY
