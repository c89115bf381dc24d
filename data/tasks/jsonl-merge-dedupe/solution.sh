#!/bin/bash
python3 - <<'PY'
import json
best = {}
for path in ("/app/export_a.jsonl", "/app/export_b.jsonl"):
    for line in open(path):
        try:
            rec = json.loads(line)
        except ValueError:
            continue
        if not isinstance(rec, dict):
            continue
        cur = best.get(rec["id"])
        if cur is None or rec["updated_at"] > cur["updated_at"]:
            best[rec["id"]] = rec
with open("/app/merged.jsonl", "w") as f:
    for k in sorted(best):
        f.write(json.dumps(best[k]) + "\n")
PY
