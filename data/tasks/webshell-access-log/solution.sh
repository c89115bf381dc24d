#!/bin/bash
python3 - <<'PY'
import json, re, urllib.parse
L = re.compile(r'^(\S+) \S+ \S+ \[[^\]]+\] "(\S+) (\S+) [^"]*" (\d{3})')
rows = [m.groups() for m in map(L.match, open("/app/logs/access.log")) if m]
ip = shell = None
for i, (a, meth, path, st) in enumerate(rows):
    if meth == "POST" and path == "/upload.php":
        for b, m2, p2, s2 in rows[i + 1:]:
            if b == a and "?cmd=" in p2 and s2 == "200":
                ip, shell = a, p2.split("?")[0]; break
    if ip: break
cmds = []
for a, meth, path, st in rows:
    if a == ip and path.startswith(shell + "?") and st == "200":
        q = urllib.parse.parse_qs(path.split("?", 1)[1])
        cmds.append(q["cmd"][0])
json.dump({"attacker_ip": ip, "webshell_path": shell, "commands": cmds}, open("/app/findings.json", "w"), indent=1)
PY
