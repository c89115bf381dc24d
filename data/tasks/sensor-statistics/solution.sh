#!/bin/bash
python3 - <<'PY'
import csv, json, math, statistics as st
vals = {}
for row in csv.DictReader(open("/app/readings.csv")):
    x = float(row["celsius"])
    vals.setdefault(row["sensor"], [])
    if not math.isnan(x):
        vals[row["sensor"]].append(x)
out = {k: {"count": len(v), "mean": st.mean(v), "median": st.median(v), "stdev": st.stdev(v),
           "min": min(v), "max": max(v)} for k, v in vals.items()}
json.dump(out, open("/app/stats.json", "w"), indent=2, sort_keys=True)
PY
