#!/bin/bash
set -e
python3 - <<'PY'
import json
R = "/app/rootfs/etc/"
rows = lambda f: [l.rstrip("\n").split(":") for l in open(R + f) if l.strip()]
pw, sh, gr = rows("passwd"), rows("shadow"), rows("group")
names = [r[0] for r in pw]; shn = {r[0]: r for r in sh}; gids = {r[2] for r in gr}
uids = {}
for r in pw:
    uids.setdefault(r[2], []).append(r[0])
out = {
    "uid0_accounts": sorted(r[0] for r in pw if r[2] == "0" and r[0] != "root"),
    "empty_passwords": sorted(r[0] for r in sh if r[1] == ""),
    "missing_shadow": sorted(n for n in names if n not in shn),
    "orphan_shadow": sorted(n for n in shn if n not in names),
    "duplicate_uids": {u: sorted(v) for u, v in uids.items() if len(v) > 1},
    "missing_primary_group": sorted(r[0] for r in pw if r[3] not in gids),
}
json.dump(out, open("/app/audit.json", "w"), indent=2)
PY
