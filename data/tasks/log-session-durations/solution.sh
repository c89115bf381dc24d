#!/bin/bash
python3 - <<'PY'
import datetime as dt
import re

pat = re.compile(r"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ) user=(\w+) action=(\w+) ip=\S+")
events = []
for line in open("/app/activity.log"):
    m = pat.fullmatch(line.strip())
    if not m:
        continue
    try:
        t = dt.datetime.strptime(m[1], "%Y-%m-%dT%H:%M:%SZ")
    except ValueError:
        continue
    events.append((t, m[2], m[3]))
events.sort()
out = ["user,sessions,total_seconds,longest_seconds"]
for user in sorted({e[1] for e in events}):
    sessions, start, last = [], None, None
    for t, _, action in (e for e in events if e[1] == user):
        if action == "login":
            if start is not None:
                sessions.append((last - start).total_seconds())
            start = last = t
        elif start is not None:
            last = t
            if action == "logout":
                sessions.append((t - start).total_seconds())
                start = None
    if start is not None:
        sessions.append((last - start).total_seconds())
    if sessions:
        out.append(f"{user},{len(sessions)},{int(sum(sessions))},{int(max(sessions))}")
open("/app/sessions.csv", "w").write("\n".join(out) + "\n")
PY
