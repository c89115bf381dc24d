#!/bin/bash
python3 - <<'PY'
import json, re
lines = open("/app/logs/auth.log").read().splitlines()
fails, fail_ips = {}, set()
res = None
for i, l in enumerate(lines):
    m = re.search(r"Failed password for .* from (\S+) port", l)
    if m:
        fails[m.group(1)] = fails.get(m.group(1), 0) + 1
        continue
    m = re.search(r"Accepted password for (\S+) from (\S+) port", l)
    if m and fails.get(m.group(2)) and res is None:
        res = {"attacker_ip": m.group(2), "compromised_user": m.group(1), "first_success": l[:15],
               "failed_before_success": fails[m.group(2)], "idx": i}
cmds = []
for l in lines[res.pop("idx"):]:
    m = re.search(r"sudo\[\d+\]:\s+(\S+) : .*COMMAND=(.*)$", l)
    if m and m.group(1) == res["compromised_user"]:
        cmds.append(m.group(2))
res["post_compromise_commands"] = cmds
json.dump(res, open("/app/incident.json", "w"), indent=1)
PY
