#!/bin/bash
set -e
cat > /app/fdreport.py <<'PY'
import argparse
import os
import re

ap = argparse.ArgumentParser()
ap.add_argument("procdir")
ap.add_argument("--threshold", default="80")
a = ap.parse_args()
thr = float(a.threshold)
rows, checked = [], 0
for entry in os.listdir(a.procdir):
    d = os.path.join(a.procdir, entry)
    if not entry.isdigit() or not os.path.isdir(d):
        continue
    if not all(os.path.exists(os.path.join(d, x)) for x in ("status", "limits", "fd")):
        continue
    checked += 1
    status = open(os.path.join(d, "status")).read()
    name = re.search(r"^Name:\s*(.*)$", status, re.M).group(1).strip()
    uid = re.search(r"^Uid:\s*(\d+)", status, re.M).group(1)
    soft = None
    for line in open(os.path.join(d, "limits")):
        if line.startswith("Max open files"):
            soft = re.split(r"\s{2,}", line.strip())[1]
    if soft is None or soft == "unlimited":
        continue
    n = len(os.listdir(os.path.join(d, "fd")))
    pct = 100.0 * n / int(soft)
    if pct >= thr:
        rows.append((-pct, int(entry), f"{entry} {name} {uid} {n}/{soft} {pct:.1f}%"))
for r in sorted(rows):
    print(r[2])
print(f"checked {checked} processes, {len(rows)} over {a.threshold}%")
raise SystemExit(1 if rows else 0)
PY
