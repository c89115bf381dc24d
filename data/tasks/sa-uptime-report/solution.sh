#!/bin/bash
set -e
python3 - <<'PY'
import json, math
from collections import defaultdict
seq = defaultdict(list)
for line in open("/app/logs/healthcheck.log"):
    p = line.split()
    if not p or p[0].startswith("#"):
        continue
    seq[p[1]].append((p[0], p[2], p[3]))
rep = {}
for s, checks in seq.items():
    ups = sorted(int(x[2][:-2]) for x in checks if x[1] == "UP")
    best, run = None, []
    for ts, st, _ in checks + [(None, "UP", "")]:
        if st == "DOWN":
            run.append(ts)
        else:
            if run and (best is None or len(run) > best["checks"]):
                best = {"start": run[0], "end": run[-1], "checks": len(run)}
            run = []
    rep[s] = {"checks": len(checks), "up": len(ups), "uptime_pct": round(100 * len(ups) / len(checks), 2),
              "p95_latency_ms": ups[math.ceil(0.95 * len(ups)) - 1], "longest_outage": best}
json.dump(rep, open("/app/uptime_report.json", "w"), indent=2)
PY
