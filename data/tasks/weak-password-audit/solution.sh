#!/bin/bash
python3 - <<'PY'
import csv, hashlib
words = [w.strip() for w in open("/app/wordlist.txt") if w.strip()]
cands = []
for w in words:
    for b in {w, w[:1].upper() + w[1:]}:
        cands.append(b); cands += [b + str(d) for d in range(10)]
rows = list(csv.DictReader(open("/app/shadow.csv")))
out = []
for r in rows:
    for c in cands:
        if hashlib.sha256((r["salt"] + c).encode()).hexdigest() == r["hash"]:
            out.append((r["user"], c)); break
with open("/app/weak_users.csv", "w", newline="") as f:
    w = csv.writer(f); w.writerow(["user", "password"]); w.writerows(sorted(out))
PY
