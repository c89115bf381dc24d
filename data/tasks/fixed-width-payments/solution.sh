#!/bin/bash
set -e
cat > /app/fw2csv.py <<'PY'
import csv
import sys

src, dst = sys.argv[1], sys.argv[2]
rows, expected = [], None
for line in open(src, encoding="utf-8"):
    line = line.rstrip("\n")
    if line.startswith("D"):
        cents = int(line[35:46])
        if line[46] == "-":
            cents = -cents
        sign = "-" if cents < 0 else ""
        d = line[27:35]
        rows.append([line[1:7], line[7:27].rstrip(), f"{d[:4]}-{d[4:6]}-{d[6:8]}",
                     f"{sign}{abs(cents) // 100}.{abs(cents) % 100:02d}", line[47:50]])
    elif line.startswith("T"):
        expected = int(line[1:10])
if expected != len(rows):
    print(f"error: trailer says {expected} records, found {len(rows)}", file=sys.stderr)
    sys.exit(1)
with open(dst, "w", newline="") as f:
    w = csv.writer(f)
    w.writerow(["id", "name", "date", "amount", "currency"])
    w.writerows(rows)
PY
python3 /app/fw2csv.py /app/payments.dat /app/payments.csv
