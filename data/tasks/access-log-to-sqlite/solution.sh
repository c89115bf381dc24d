#!/bin/bash
set -e
python3 - <<'PY'
import datetime as dt
import re
import sqlite3

LINE = re.compile(r'^(\S+) \S+ \S+ \[([^\]]+)\] "(\S+) (\S+) [^"]*" (\d{3}) (\d+|-) "((?:[^"\\]|\\.)*)" "((?:[^"\\]|\\.)*)"$')


def unescape(s):
    return None if s == "-" else re.sub(r'\\(.)', r'\1', s)


rows, rejects = [], []
for raw in open("/app/access.log"):
    line = raw.rstrip("\n")
    if not line.strip():
        continue
    m = LINE.match(line)
    try:
        if not m:
            raise ValueError(line)
        t = dt.datetime.strptime(m.group(2), "%d/%b/%Y:%H:%M:%S %z").astimezone(dt.timezone.utc)
    except ValueError:
        rejects.append(line)
        continue
    ip, _, method, path, status, size, ref, ua = m.groups()
    rows.append((ip, t.strftime("%Y-%m-%dT%H:%M:%SZ"), method, path, int(status),
                 0 if size == "-" else int(size), unescape(ref), unescape(ua)))
con = sqlite3.connect("/app/access.db")
con.execute("DROP TABLE IF EXISTS requests")
con.execute("CREATE TABLE requests(ip TEXT, ts TEXT, method TEXT, path TEXT, status INTEGER, bytes INTEGER, referrer TEXT, user_agent TEXT)")
con.executemany("INSERT INTO requests VALUES (?,?,?,?,?,?,?,?)", rows)
con.commit()
con.close()
open("/app/rejects.txt", "w").write("".join(l + "\n" for l in rejects))
PY
