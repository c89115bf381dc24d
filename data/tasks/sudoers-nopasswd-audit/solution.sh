#!/bin/bash
python3 - <<'PY'
import os, re

def logical_lines(path):
    out, cur = [], ""
    for raw in open(path).read().splitlines():
        if raw.rstrip().endswith("\\"):
            cur += raw.rstrip()[:-1] + " "
            continue
        out.append(cur + raw); cur = ""
    return out

lines = []
def read(path):
    for l in logical_lines(path):
        s = l.strip()
        m = re.match(r"#includedir\s+(\S+)", s)
        if m:
            d = m.group(1)
            for f in sorted(os.listdir(d)):
                if f.endswith("~") or "." in f:
                    continue
                read(os.path.join(d, f))
            continue
        if not s or s.startswith("#"):
            continue
        lines.append(s)
read("/app/audit/sudoers")

groups = {}
for l in open("/app/audit/group"):
    p = l.strip().split(":")
    if len(p) == 4:
        groups[p[0]] = [u for u in p[3].split(",") if u]
aliases, noauth, result = {}, set(), set()
for s in lines:
    m = re.match(r"User_Alias\s+(\w+)\s*=\s*(.+)", s)
    if m:
        aliases[m.group(1)] = [x.strip() for x in m.group(2).split(",")]
        continue
    m = re.match(r"Defaults:(\S+)\s+!authenticate", s)
    if m:
        noauth.update(x.strip() for x in m.group(1).split(","))
        continue
    if s.startswith("Defaults"):
        continue
    m = re.match(r"(\S+)\s+\S+\s*=\s*(?:\(([^)]*)\))?\s*(.*)$", s)
    if not m:
        continue
    who, runas, rest = m.group(1), m.group(2), m.group(3).strip()
    if runas is not None and runas.split(":")[0].strip() not in ("ALL", "root"):
        continue
    tags = []
    while True:
        t = re.match(r"(NOPASSWD|PASSWD|NOEXEC|EXEC|SETENV|NOSETENV):\s*", rest)
        if not t:
            break
        tags.append(t.group(1)); rest = rest[t.end():]
    if rest.strip() != "ALL":
        continue
    users = []
    for w in who.split(","):
        w = w.strip()
        if w.startswith("%"):
            users += groups.get(w[1:], [])
        elif w in aliases:
            users += aliases[w]
        else:
            users.append(w)
    for u in users:
        if ("NOPASSWD" in tags and "PASSWD" not in tags) or u in noauth:
            result.add(u)
open("/app/audit/nopasswd_root.txt", "w").write("\n".join(sorted(result)) + "\n")
PY
