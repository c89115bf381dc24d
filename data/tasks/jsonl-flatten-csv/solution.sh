#!/bin/bash
set -e
cat > /app/flatten.py <<'PY'
import csv
import json
import sys


def flatten(obj, prefix, out):
    if isinstance(obj, dict):
        for k, v in obj.items():
            flatten(v, f"{prefix}.{k}" if prefix else k, out)
    elif isinstance(obj, list):
        for i, v in enumerate(obj):
            flatten(v, f"{prefix}.{i}" if prefix else str(i), out)
    elif obj is None:
        out[prefix] = ""
    elif isinstance(obj, bool):
        out[prefix] = "true" if obj else "false"
    elif isinstance(obj, str):
        out[prefix] = obj
    else:
        out[prefix] = json.dumps(obj)
    return out


records = [flatten(json.loads(l), "", {}) for l in open(sys.argv[1], encoding="utf-8") if l.strip()]
cols = sorted({k for r in records for k in r})
with open(sys.argv[2], "w", newline="", encoding="utf-8") as f:
    w = csv.writer(f)
    w.writerow(cols)
    for r in records:
        w.writerow([r.get(c, "") for c in cols])
PY
python3 /app/flatten.py /app/events.jsonl /app/events.csv
