#!/bin/bash
set -e
cat > /app/semver-filter <<'PY'
#!/usr/bin/env python3
import re, sys
from functools import cmp_to_key

NUM = r"(?:0|[1-9]\d*)"
PID = rf"(?:{NUM}|\d*[A-Za-z-][0-9A-Za-z-]*)"
VER = rf"({NUM})\.({NUM})\.({NUM})(?:-({PID}(?:\.{PID})*))?(?:\+[0-9A-Za-z-]+(?:\.[0-9A-Za-z-]+)*)?"


def parse(v):
    m = re.fullmatch(VER, v)
    if not m:
        return None
    pre = tuple(int(x) if x.isdigit() else x for x in m[4].split(".")) if m[4] else ()
    return (int(m[1]), int(m[2]), int(m[3])), pre


def cmp_pre(a, b):
    if not a or not b:
        return (not a) - (not b) if a != b else 0
    for x, y in zip(a, b):
        if x == y:
            continue
        if isinstance(x, int) != isinstance(y, int):
            return -1 if isinstance(x, int) else 1
        return -1 if x < y else 1
    return (len(a) > len(b)) - (len(a) < len(b))


def cmp(a, b):
    if a[0] != b[0]:
        return -1 if a[0] < b[0] else 1
    return cmp_pre(a[1], b[1])


OPS = {">": lambda c: c > 0, ">=": lambda c: c >= 0, "<": lambda c: c < 0, "<=": lambda c: c <= 0, "=": lambda c: c == 0}


def parse_range(r):
    sets = []
    for part in r.split("||"):
        comps, pres = [], []
        toks = part.split()
        if not toks:
            raise ValueError
        for t in toks:
            m = re.fullmatch(r"(>=|<=|>|<|=|\^|~)?(.*)", t)
            op, v = m[1] or "=", parse(m[2])
            if v is None:
                raise ValueError
            if v[1]:
                pres.append(v[0])
            (ma, mi, pa) = v[0]
            if op == "^":
                hi = (ma + 1, 0, 0) if ma else (0, mi + 1, 0) if mi else (0, 0, pa + 1)
                comps += [(">=", v), ("<", (hi, ()))]
            elif op == "~":
                comps += [(">=", v), ("<", ((ma, mi + 1, 0), ()))]
            else:
                comps.append((op, v))
        sets.append((comps, pres))
    return sets


def sat(v, sets):
    for comps, pres in sets:
        if all(OPS[op](cmp(v, w)) for op, w in comps) and (not v[1] or v[0] in pres):
            return True
    return False


try:
    sets = parse_range(sys.argv[1])
except (ValueError, IndexError):
    print("semver-filter: invalid range", file=sys.stderr)
    sys.exit(2)
seen = {}
for line in sys.stdin.read().split("\n"):
    line = line.rstrip("\r")
    p = parse(line)
    if p and sat(p, sets):
        seen[line] = p
keys = sorted(seen, key=cmp_to_key(lambda a, b: cmp(seen[a], seen[b]) or ((a > b) - (a < b))))
for k in keys:
    print(k)
PY
chmod +x /app/semver-filter
