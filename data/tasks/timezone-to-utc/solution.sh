#!/bin/bash
set -e
python3 - <<'PY'
import csv
import datetime as dt
from collections import Counter
from zoneinfo import ZoneInfo

out = []
for row in csv.DictReader(open("/app/events.csv")):
    local = dt.datetime.strptime(row["local_time"], "%Y-%m-%d %H:%M")
    utc = local.replace(tzinfo=ZoneInfo(row["timezone"]), fold=0).astimezone(dt.timezone.utc)
    out.append((utc.strftime("%Y-%m-%dT%H:%M:%SZ"), row["event_id"]))
out.sort()
with open("/app/events_utc.csv", "w", newline="") as f:
    w = csv.writer(f)
    w.writerow(["event_id", "utc_time"])
    w.writerows([e, u] for u, e in out)
days = Counter(u[:10] for u, _ in out)
with open("/app/daily_counts.csv", "w", newline="") as f:
    w = csv.writer(f)
    w.writerow(["date", "events"])
    w.writerows(sorted(days.items()))
PY
