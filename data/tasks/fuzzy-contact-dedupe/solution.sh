#!/bin/bash
set -e
cat > /app/dedupe.py <<'PY'
import csv
import json
import re

SUFFIXES = {"inc", "ltd", "llc", "gmbh"}


def n_email(e):
    e = e.strip().lower()
    if "@" not in e:
        return ""
    local, dom = e.rsplit("@", 1)
    if dom in ("gmail.com", "googlemail.com"):
        local = local.split("+", 1)[0].replace(".", "")
        dom = "gmail.com"
    return f"{local}@{dom}"


def n_phone(p):
    d = re.sub(r"\D", "", p)
    return d[-10:] if len(d) >= 10 else ""


def tokens(s):
    return re.sub(r"[^a-z0-9 ]", " ", s.lower()).split()


def n_name(n):
    return " ".join(sorted(tokens(n)))


def n_company(c):
    return " ".join(t for t in tokens(c) if t not in SUFFIXES)


def clusters(rows):
    parent = {r["id"]: r["id"] for r in rows}

    def find(x):
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    seen = {}
    for r in rows:
        keys = []
        if n_email(r["email"]):
            keys.append(("e", n_email(r["email"])))
        if n_phone(r["phone"]):
            keys.append(("p", n_phone(r["phone"])))
        if n_name(r["name"]) and n_company(r["company"]):
            keys.append(("n", n_name(r["name"]), n_company(r["company"])))
        for k in keys:
            if k in seen:
                a, b = find(seen[k]), find(r["id"])
                if a != b:
                    parent[max(a, b)] = min(a, b)
            else:
                seen[k] = r["id"]
    groups = {}
    for r in rows:
        groups.setdefault(find(r["id"]), []).append(r["id"])
    return sorted(sorted(g) for g in groups.values())


rows = list(csv.DictReader(open("/app/contacts.csv", newline="")))
groups = clusters(rows)
json.dump([g for g in groups if len(g) > 1], open("/app/duplicates.json", "w"), indent=1)
by_id = {r["id"]: r for r in rows}
with open("/app/contacts_dedup.csv", "w", newline="") as f:
    w = csv.DictWriter(f, ["id", "name", "email", "phone", "company"])
    w.writeheader()
    for g in groups:
        rec = dict(by_id[g[0]])
        for field in ("name", "email", "phone", "company"):
            if not rec[field].strip():
                rec[field] = next((by_id[o][field] for o in g[1:] if by_id[o][field].strip()), rec[field])
        w.writerow(rec)
PY
python3 /app/dedupe.py
