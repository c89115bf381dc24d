#!/bin/bash
set -e
python3 - <<'PY'
import os, re, shutil
pats = [re.compile(r"^(?:IMG|VID)_(\d{4})(\d{2})(\d{2})_(\d{2})(\d{2})(\d{2})\.([^.]+)$"),
        re.compile(r"^PXL_(\d{4})(\d{2})(\d{2})_(\d{2})(\d{2})(\d{2})\d{3}\.([^.]+)$"),
        re.compile(r"^Screenshot (\d{4})-(\d{2})-(\d{2}) at (\d{2})\.(\d{2})\.(\d{2})\.([^.]+)$")]
groups = {}
for n in sorted(os.listdir("/app/inbox")):
    for p in pats:
        m = p.match(n)
        if m:
            y, mo, d, h, mi, s, ext = m.groups()
            groups.setdefault((y, mo, f"{y}-{mo}-{d}_{h}{mi}{s}", ext.lower()), []).append(n)
            break
for (y, mo, base, ext), ns in groups.items():
    os.makedirs(f"/app/library/{y}/{mo}", exist_ok=True)
    for i, n in enumerate(sorted(ns)):
        dest = f"/app/library/{y}/{mo}/{base}{'' if i == 0 else '_' + str(i)}.{ext}"
        shutil.move("/app/inbox/" + n, dest)
PY
