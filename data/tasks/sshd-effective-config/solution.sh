#!/bin/bash
cat > /app/sshd_effective.py <<'PY'
import argparse
import fnmatch
import ipaddress

ap = argparse.ArgumentParser()
ap.add_argument("config")
ap.add_argument("--user", required=True)
ap.add_argument("--groups", default="")
ap.add_argument("--host", required=True)
ap.add_argument("--addr", required=True)
a = ap.parse_args()
groups = [g for g in a.groups.split(",") if g]


def kv(line):
    s = line.strip()
    if not s or s.startswith("#"):
        return None
    head = s.split("=", 1)[0]
    if "=" in s and len(head.split()) == 1:
        k, v = s.split("=", 1)
    else:
        parts = s.split(None, 1)
        k, v = parts[0], parts[1] if len(parts) > 1 else ""
    return k.strip().lower(), " ".join(v.split())


def one(value, pat, addr):
    if addr and "/" in pat:
        try:
            return ipaddress.ip_address(value) in ipaddress.ip_network(pat, strict=False)
        except ValueError:
            return False
    return fnmatch.fnmatchcase(value, pat)


def listmatch(values, pats, addr=False):
    pos = [p for p in pats.split(",") if not p.startswith("!")]
    neg = [p[1:] for p in pats.split(",") if p.startswith("!")]
    if any(one(v, p, addr) for v in values for p in neg):
        return False
    return any(one(v, p, addr) for v in values for p in pos)


def matches(args):
    w = args.split()
    if [x.lower() for x in w] == ["all"]:
        return True
    ctx = {"user": [a.user], "group": groups, "host": [a.host], "address": [a.addr]}
    for crit, pats in zip(w[::2], w[1::2]):
        c = crit.lower()
        if c not in ctx or not listmatch(ctx[c], pats, c == "address"):
            return False
    return True


glob, acc, over, active = {}, {}, {}, None
for line in open(a.config):
    r = kv(line)
    if not r:
        continue
    k, v = r
    if k == "match":
        active = matches(v)
    elif active is None:
        if k in ("hostkey", "acceptenv"):
            acc.setdefault(k, []).append(v)
        else:
            glob.setdefault(k, v)
    elif active:
        over.setdefault(k, v)
glob.update(over)
for k in sorted(set(glob) | set(acc)):
    for v in acc.get(k, [glob.get(k)]):
        print(f"{k} {v}")
PY
