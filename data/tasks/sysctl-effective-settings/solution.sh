#!/bin/bash
set -e
python3 - <<'PY'
import glob, os
R = "/app/rootfs/etc"
files = sorted(glob.glob(f"{R}/sysctl.d/*.conf"), key=os.path.basename) + [f"{R}/sysctl.conf"]
vals = {}
for f in files:
    for line in open(f):
        s = line.strip()
        if not s or s[0] in "#;" or "=" not in s:
            continue
        k, v = s.split("=", 1)
        k = k.strip().lstrip("-").strip().replace("/", ".")
        vals[k] = v.strip()
with open("/app/effective-sysctl.conf", "w") as out:
    for k in sorted(vals):
        out.write(f"{k} = {vals[k]}\n")
PY
