#!/bin/bash
python3 - <<'PY'
import hashlib, json, os, stat
man = json.load(open("/app/MANIFEST.json"))
root = "/app/deploy"
present = set()
for dp, dns, fns in os.walk(root):
    for n in fns:
        full = os.path.join(dp, n)
        if os.path.isfile(full) and not os.path.islink(full):
            present.add(os.path.relpath(full, root))
res = {"missing": [], "modified": [], "mode_changed": [], "unexpected": sorted(present - set(man))}
for p, e in man.items():
    if p not in present:
        res["missing"].append(p); continue
    full = os.path.join(root, p)
    data = open(full, "rb").read()
    if hashlib.sha256(data).hexdigest() != e["sha256"] or len(data) != e["size"]:
        res["modified"].append(p)
    elif stat.S_IMODE(os.stat(full).st_mode) != int(e["mode"], 8):
        res["mode_changed"].append(p)
res = {k: sorted(v) for k, v in res.items()}
json.dump(res, open("/app/audit.json", "w"), indent=1)
PY
