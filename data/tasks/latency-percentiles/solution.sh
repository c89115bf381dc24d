#!/bin/bash
set -e
python3 - <<'PY'
import json
import math
import re

pat = re.compile(r"^\S+ method=(\S+) path=(\S+) status=(\d{3}) latency_ms=(\d+(?:\.\d+)?)$")
groups = {}
for line in open("/app/requests.log"):
    m = pat.match(line.strip())
    if not m:
        continue
    path = "/".join("{id}" if s.isdigit() else s for s in m.group(2).split("?")[0].split("/"))
    groups.setdefault(f"{m.group(1)} {path}", []).append(float(m.group(4)))


def rank(values, p):
    return values[max(1, math.ceil(p / 100 * len(values))) - 1]


out = {}
for key, vals in groups.items():
    vals.sort()
    out[key] = {"count": len(vals), "p50": rank(vals, 50), "p95": rank(vals, 95), "p99": rank(vals, 99)}
json.dump(out, open("/app/latency.json", "w"), indent=2)
PY
