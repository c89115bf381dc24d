#!/bin/bash
cat > /app/bruteforce.py <<'PY'
import datetime as dt
import json
import re
import sys

FAIL = re.compile(r"Failed password for (?:invalid user )?(\S+) from (\S+) port")
OK = re.compile(r"Accepted (?:password|publickey) for (\S+) from (\S+) port")
REP = re.compile(r"message repeated (\d+) times: \[ (.*)\]$")

fails, oks = {}, []
for line in open(sys.argv[1]):
    line = line.rstrip("\n")
    m = re.match(r"^(\w{3} +\d+ \d\d:\d\d:\d\d) \S+ sshd\[\d+\]: (.*)$", line)
    if not m:
        continue
    t = dt.datetime.strptime("2024 " + " ".join(m.group(1).split()), "%Y %b %d %H:%M:%S")
    body, n = m.group(2), 1
    r = REP.match(body)
    if r:
        n, body = int(r.group(1)), r.group(2)
    f = FAIL.search(body)
    if f:
        fails.setdefault(f.group(2), []).extend([(t, f.group(1))] * n)
    o = OK.search(body)
    if o:
        oks.append((t, o.group(1), o.group(2)))
report = {}
for ip in sorted(fails):
    att = fails[ip]
    flag = next((att[i][0] for i in range(4, len(att)) if (att[i][0] - att[i - 4][0]).total_seconds() <= 60), None)
    if flag is None:
        continue
    report[ip] = {"flagged_at": flag.strftime("%Y-%m-%d %H:%M:%S"), "failures": len(att),
                  "users": sorted({u for _, u in att}),
                  "compromised_users": sorted({u for t, u, i in oks if i == ip and t > flag})}
print(json.dumps(report, indent=1))
PY
