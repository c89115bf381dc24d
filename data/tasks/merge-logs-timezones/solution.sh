#!/bin/bash
cat > /app/tzmerge.py <<'PY'
import datetime as dt
import os
import sys
from zoneinfo import ZoneInfo

UTC = dt.timezone.utc
d = sys.argv[1]
zones = {}
for line in open(os.path.join(d, "hosts.tz")):
    p = line.split()
    if p and not p[0].startswith("#"):
        zones[p[0]] = ZoneInfo(p[1])
events = []
for host, zone in zones.items():
    prev = None
    for i, line in enumerate(open(os.path.join(d, "logs", f"{host}.log"))):
        line = line.rstrip("\n")
        if not line:
            continue
        naive = dt.datetime.strptime(line[:19], "%Y-%m-%d %H:%M:%S")
        cands = sorted({naive.replace(tzinfo=zone, fold=f).astimezone(UTC) for f in (0, 1)})
        t = next((c for c in cands if prev is None or c >= prev), cands[-1])
        prev = t
        events.append((t, host, i, line[20:]))
events.sort(key=lambda e: (e[0], e[1], e[2]))
sys.stdout.write("".join(f"{t.strftime('%Y-%m-%dT%H:%M:%SZ')} {h} {m}\n" for t, h, _, m in events))
PY
