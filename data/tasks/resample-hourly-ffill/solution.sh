#!/bin/bash
set -e
python3 - <<'PY'
import csv
import datetime as dt

buckets = {}
for r in csv.DictReader(open("/app/power.csv", newline="")):
    t = dt.datetime.strptime(r["timestamp"], "%Y-%m-%dT%H:%M:%SZ").replace(minute=0, second=0)
    buckets.setdefault(t, []).append(float(r["kw"]))
h, end, prev = min(buckets), max(buckets), None
with open("/app/hourly.csv", "w", newline="") as f:
    w = csv.writer(f)
    w.writerow(["hour_start", "mean_kw", "samples", "filled"])
    while h <= end:
        vals = buckets.get(h)
        if vals:
            prev = sum(vals) / len(vals)
        w.writerow([h.strftime("%Y-%m-%dT%H:00:00Z"), f"{prev:.4f}", len(vals or []), 0 if vals else 1])
        h += dt.timedelta(hours=1)
PY
