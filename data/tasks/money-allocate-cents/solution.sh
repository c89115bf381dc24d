#!/bin/bash
set -e
cat > /app/allocate.py <<'PY'
import sys
from fractions import Fraction


def allocate(total_cents, weights):
    ws = [Fraction(w) for w in weights]
    if not ws or any(w < 0 for w in ws) or sum(ws) == 0:
        raise ValueError("bad weights")
    sign, total = (-1 if total_cents < 0 else 1), abs(total_cents)
    s = sum(ws)
    exact = [total * w / s for w in ws]
    shares = [int(e) for e in exact]
    left = total - sum(shares)
    order = sorted(range(len(ws)), key=lambda i: (-(exact[i] - shares[i]), i))
    for i in order[:left]:
        shares[i] += 1
    return [sign * x for x in shares]


if __name__ == "__main__":
    try:
        out = allocate(int(sys.argv[1]), [Fraction(a) for a in sys.argv[2:]])
    except (ValueError, IndexError, ZeroDivisionError) as e:
        print("error: %s" % e, file=sys.stderr)
        sys.exit(1)
    print(" ".join(map(str, out)))
PY
