#!/bin/bash
python3 - <<'PY'
import json, re
counts = {}
for line in open("/app/access.log"):
    m = re.search(r'" (\d{3}) ', line)
    if m:
        counts[m.group(1)] = counts.get(m.group(1), 0) + 1
json.dump(counts, open("/app/status_counts.json", "w"), indent=2, sort_keys=True)
PY
