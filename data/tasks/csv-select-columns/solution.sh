#!/bin/bash
set -e
cat > /app/csvcols <<'PY'
#!/usr/bin/env python3
import csv, sys
path, names = sys.argv[1], sys.argv[2:]
with open(path, newline="", encoding="utf-8") as f:
    rows = list(csv.reader(f))
header = rows[0]
missing = [n for n in names if n not in header]
if missing or not names:
    print(f"csvcols: unknown column(s): {missing}", file=sys.stderr)
    sys.exit(1)
idx = [header.index(n) for n in names]
w = csv.writer(sys.stdout, lineterminator="\n", quoting=csv.QUOTE_MINIMAL)
for row in rows:
    w.writerow([row[i] if i < len(row) else "" for i in idx])
PY
chmod +x /app/csvcols
