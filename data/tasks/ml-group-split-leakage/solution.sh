#!/bin/bash
set -e
cd /app
python3 - <<'PY'
import csv, os, random
rows = list(csv.reader(open("data/events.csv")))
header, seen, data = rows[0], set(), []
for r in rows[1:]:
    if tuple(r) not in seen:
        seen.add(tuple(r)); data.append(r)
users = sorted({r[0] for r in data})
rate = sum(r[4] == "1" for r in data) / len(data)
for seed in range(1000):
    val = set(random.Random(seed).sample(users, len(users) // 5))
    v = [r for r in data if r[0] in val]
    if abs(sum(r[4] == "1" for r in v) / len(v) - rate) <= 0.02:
        break
os.makedirs("split", exist_ok=True)
for name, part in (("train", [r for r in data if r[0] not in val]), ("val", v)):
    with open(f"split/{name}.csv", "w", newline="") as f:
        w = csv.writer(f); w.writerow(header); w.writerows(part)
PY
