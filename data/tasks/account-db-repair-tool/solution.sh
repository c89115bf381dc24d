#!/bin/bash
cat > /app/acctfix.py <<'PY'
import os
import sys

ROOT = sys.argv[1]


def read(name):
    with open(os.path.join(ROOT, "etc", name)) as f:
        return [l.rstrip("\n").split(":") for l in f if l.strip()]


def write(name, rows):
    with open(os.path.join(ROOT, "etc", name), "w") as f:
        f.write("".join(":".join(r) + "\n" for r in rows))


def first_by_name(rows, allowed=None):
    out, seen = [], set()
    for r in rows:
        if r[0] not in seen and (allowed is None or r[0] in allowed):
            seen.add(r[0])
            out.append(r)
    return out


passwd = first_by_name(read("passwd"))
users = {r[0] for r in passwd}
group = first_by_name(read("group"))
for r in group:
    members = []
    for m in r[3].split(","):
        if m in users and m not in members:
            members.append(m)
    r[3] = ",".join(members)
gids = {r[2] for r in group}
for r in passwd:
    if r[3] not in gids:
        group.append([r[0], "x", r[3], ""])
        gids.add(r[3])
shadow = first_by_name(read("shadow"), users)
have = {r[0] for r in shadow}
shadow += [[r[0], "!", "19000", "0", "99999", "7", "", "", ""] for r in passwd if r[0] not in have]
old = {r[0]: r for r in reversed(read("gshadow"))}
gshadow = [[g[0], old[g[0]][1], old[g[0]][2], g[3]] if g[0] in old else [g[0], "!", "", g[3]] for g in group]
write("passwd", passwd)
write("group", group)
write("shadow", shadow)
write("gshadow", gshadow)
PY
