#!/bin/bash
set -e
cat > /app/iniget <<'PY'
#!/usr/bin/env python3
import sys

path, want_sec, want_key = sys.argv[1:4]
sec, found = "", None
for raw in open(path, encoding="utf-8"):
    line = raw.strip()
    if not line or line[0] in ";#":
        continue
    if line.startswith("[") and line.endswith("]"):
        sec = line[1:-1].strip()
        continue
    if "=" not in line:
        continue
    k, v = line.split("=", 1)
    k, v = k.strip(), v.strip()
    if len(v) >= 2 and v[0] == v[-1] == '"':
        v = v[1:-1]
    if sec == want_sec and k == want_key:
        found = v
if found is None:
    sys.exit(1)
print(found)
PY
chmod +x /app/iniget
