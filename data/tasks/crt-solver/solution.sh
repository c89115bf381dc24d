#!/bin/bash
set -e
cat > /app/crt.py <<'PY'
import math
import sys

x, m = 0, 1
for line in sys.stdin:
    if not line.strip():
        continue
    a, n = map(int, line.split())
    g = math.gcd(m, n)
    if (a - x) % g:
        print("none")
        sys.exit(0)
    # x + m*k = a (mod n)  ->  k = (a - x)/g * inv(m/g) mod n/g
    k = (a - x) // g * pow(m // g, -1, n // g) % (n // g)
    x += m * k
    m = m // g * n
    x %= m
print(x, m)
PY
