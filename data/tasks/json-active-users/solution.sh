#!/bin/bash
python3 - <<'PY'
import json
users = json.load(open("/app/users.json"))["users"]
out = {}
for u in users:
    if u.get("active") is True:
        out.setdefault(u["team"], []).append(u["email"])
out = {k: sorted(v) for k, v in out.items()}
json.dump(out, open("/app/active_by_team.json", "w"), indent=2, sort_keys=True)
PY
