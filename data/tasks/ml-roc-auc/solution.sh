#!/bin/bash
set -e
cat > /app/auc.py <<'PY'
import csv
import sys
from itertools import groupby

rows = [(float(r["score"]), int(r["label"])) for r in csv.DictReader(open(sys.argv[1], newline=""))]
pos = sum(l for _, l in rows)
neg = len(rows) - pos
if pos == 0 or neg == 0:
    print("undefined")
    sys.exit(2)
rows.sort()
wins, negs_below = 0.0, 0
for _, grp in groupby(rows, key=lambda r: r[0]):
    g = [l for _, l in grp]
    p = sum(g)
    n = len(g) - p
    wins += p * negs_below + 0.5 * p * n
    negs_below += n
print("%.6f" % (wins / (pos * neg)))
PY
