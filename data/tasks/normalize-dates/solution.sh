#!/bin/bash
python3 - <<'PY'
import csv, datetime as dt
with open("/app/orders.csv", newline="") as f:
    rows = list(csv.reader(f))
for row in rows[1:]:
    for fmt in ("%m/%d/%Y", "%Y-%m-%d", "%d %b %Y"):
        try:
            row[1] = dt.datetime.strptime(row[1], fmt).date().isoformat()
            break
        except ValueError:
            pass
with open("/app/orders_clean.csv", "w", newline="") as f:
    csv.writer(f, lineterminator="\n").writerows(rows)
PY
