#!/bin/bash
set -e
python3 - <<'PY'
import csv
import json

emps = list(csv.DictReader(open("/app/employees.csv", newline="")))
ids = {e["id"] for e in emps}
salary = {e["id"]: int(e["salary"]) for e in emps}
kids = {}
for e in emps:
    kids.setdefault(e["manager_id"], []).append(e["id"])
tops = [e["id"] for e in emps if not e["manager_id"] or e["manager_id"] not in ids]
depth, order = {}, []
stack = [(t, 0) for t in tops]
while stack:  # iterative DFS: pre-order, then totals in reverse
    n, d = stack.pop()
    depth[n] = d
    order.append(n)
    stack.extend((k, d + 1) for k in kids.get(n, []))
count = {n: 0 for n in order}
total = {n: salary[n] for n in order}
for n in reversed(order):
    for k in kids.get(n, []):
        count[n] += 1 + count[k]
        total[n] += total[k]
with open("/app/rollup.csv", "w", newline="") as f:
    w = csv.writer(f)
    w.writerow(["id", "depth", "reports_total", "subtree_salary"])
    for n in order:
        w.writerow([n, depth[n], count[n], total[n]])
json.dump({"orphans": sorted(e["id"] for e in emps if e["manager_id"] and e["manager_id"] not in ids),
           "unreachable": sorted(ids - set(depth))}, open("/app/anomalies.json", "w"), indent=2)
PY
