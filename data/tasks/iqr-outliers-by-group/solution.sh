#!/bin/bash
set -e
python3 - <<'PY'
import csv
import json
import statistics

rows = list(csv.DictReader(open("/app/measurements.csv", newline="")))
groups = {}
for r in rows:
    groups.setdefault(r["machine"], []).append(float(r["value"]))
summary, out = {}, []
for m, vals in groups.items():
    q1, _, q3 = statistics.quantiles(vals, n=4, method="inclusive")
    iqr = q3 - q1
    summary[m] = {"q1": q1, "q3": q3, "iqr": iqr, "lower_fence": q1 - 1.5 * iqr, "upper_fence": q3 + 1.5 * iqr}
for r in rows:
    s, v = summary[r["machine"]], float(r["value"])
    if v < s["lower_fence"] or v > s["upper_fence"]:
        out.append([r["reading_id"], r["machine"], r["value"], "low" if v < s["lower_fence"] else "high"])
json.dump(summary, open("/app/summary.json", "w"), indent=2)
with open("/app/outliers.csv", "w", newline="") as f:
    w = csv.writer(f)
    w.writerow(["reading_id", "machine", "value", "side"])
    w.writerows(out)
PY
