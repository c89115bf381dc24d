#!/bin/bash
set -e
python3 - <<'PY'
import csv
import json

arms = {}
for r in csv.DictReader(open("/app/trial.csv", newline="")):
    arms.setdefault(r["arm"], []).append((int(r["months"]), int(r["event"])))
out = {}
for arm, data in arms.items():
    s, res = 1.0, {"times": [], "at_risk": [], "events": [], "survival": [], "median": None}
    for t in sorted({t for t, e in data if e == 1}):
        n = sum(1 for u, _ in data if u >= t)
        d = sum(1 for u, e in data if u == t and e == 1)
        s *= 1 - d / n
        for k, v in (("times", t), ("at_risk", n), ("events", d), ("survival", s)):
            res[k].append(v)
        if res["median"] is None and s <= 0.5:
            res["median"] = t
    out[arm] = res
json.dump(out, open("/app/km.json", "w"), indent=2)
PY
