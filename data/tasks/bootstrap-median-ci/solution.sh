#!/bin/bash
set -e
cat > /app/bootstrap.py <<'PY'
import json
import sys
import math
import random
import statistics


def interp(s, q):
    h = (len(s) - 1) * q
    lo = math.floor(h)
    hi = min(lo + 1, len(s) - 1)
    return s[lo] + (h - lo) * (s[hi] - s[lo])


def bootstrap(data, seed, b):
    rng = random.Random(seed)
    n = len(data)
    stats = sorted(statistics.median([data[rng.randrange(n)] for _ in range(n)]) for _ in range(b))
    return {"median": statistics.median(data), "ci_low": interp(stats, 0.025), "ci_high": interp(stats, 0.975)}


if __name__ == "__main__":
    values = [float(l) for l in open(sys.argv[1]) if l.strip()]
    print(json.dumps(bootstrap(values, int(sys.argv[2]), int(sys.argv[3]))))
PY
python3 /app/bootstrap.py /app/response_ms.txt 2024 2000 > /app/ci.json
