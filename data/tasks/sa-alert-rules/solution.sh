#!/bin/bash
set -e
cat > /app/alerts.py <<'PY'
import csv
import json
import operator
import sys
from collections import defaultdict

OPS = {">": operator.gt, ">=": operator.ge, "<": operator.lt, "<=": operator.le}
series = defaultdict(list)
for r in csv.DictReader(open(sys.argv[1], newline="")):
    series[(r["host"], r["metric"])].append((r["timestamp"], float(r["value"])))
rules = json.load(open(sys.argv[2]))
alerts = []
for rule in rules:
    test = OPS[rule["op"]]
    pick = max if rule["op"] in (">", ">=") else min
    for (host, metric), samples in series.items():
        if metric != rule["metric"]:
            continue
        samples.sort()
        run = []
        for i, (ts, v) in enumerate(samples + [(None, None)]):
            if ts is not None and test(v, rule["threshold"]):
                run.append((ts, v))
                continue
            if len(run) >= rule["for"]:
                alerts.append({"rule": rule["name"], "severity": rule["severity"], "host": host,
                               "start": run[rule["for"] - 1][0], "end": run[-1][0],
                               "peak": pick(v for _, v in run), "resolved": ts is not None})
            run = []
alerts.sort(key=lambda a: (a["start"], a["rule"], a["host"]))
print(json.dumps(alerts, indent=1))
PY
