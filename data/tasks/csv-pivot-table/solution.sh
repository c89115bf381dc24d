#!/bin/bash
set -e
python3 - <<'PY'
import csv
from collections import defaultdict

cell = defaultdict(int)
for r in csv.DictReader(open("/app/sales_long.csv")):
    cell[(r["month"], r["product"])] += int(r["units"])
months = sorted({m for m, _ in cell})
prods = sorted({p for _, p in cell})
with open("/app/pivot.csv", "w", newline="") as f:
    w = csv.writer(f)
    w.writerow(["month", *prods, "total"])
    for m in months:
        vals = [cell[(m, p)] for p in prods]
        w.writerow([m, *vals, sum(vals)])
    cols = [sum(cell[(m, p)] for m in months) for p in prods]
    w.writerow(["TOTAL", *cols, sum(cols)])
PY
