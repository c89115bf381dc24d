#!/bin/bash
python3 - <<'PY'
import csv
tot = {}
with open("/app/sales.csv") as f:
    for row in csv.DictReader(f):
        tot[row["region"]] = tot.get(row["region"], 0) + int(row["quantity"]) * float(row["unit_price"])
with open("/app/revenue_by_region.csv", "w") as f:
    f.write("region,revenue\n")
    for reg, v in sorted(tot.items(), key=lambda kv: -kv[1]):
        f.write(f"{reg},{v:.2f}\n")
PY
