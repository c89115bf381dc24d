#!/bin/bash
cat > /app/banlog.py <<'PY'
import datetime, ipaddress, json, re, sys

FAIL = re.compile(r"^(\w{3}\s+\d+ \d\d:\d\d:\d\d) \S+ sshd\[\d+\]: (?:Failed password for (?:invalid user )?\S+ from (\S+) port \d+ ssh2|Invalid user \S+ from (\S+) port \d+)\s*$")


def main(log, jail):
    cfg = json.load(open(jail))
    nets = [ipaddress.ip_network(x, strict=False) for x in cfg["ignoreip"]]
    mx, ft, bt = cfg["maxretry"], cfg["findtime"], cfg["bantime"]
    fails, banned, events = {}, {}, []
    for line in open(log):
        m = FAIL.match(line.rstrip("\n"))
        if not m:
            continue
        t = datetime.datetime.strptime("2024 " + " ".join(m.group(1).split()), "%Y %b %d %H:%M:%S")
        ip = m.group(2) or m.group(3)
        if any(ipaddress.ip_address(ip) in n for n in nets):
            continue
        if ip in banned and t < banned[ip]:
            continue
        lst = [x for x in fails.get(ip, []) if x > t - datetime.timedelta(seconds=ft)] + [t]
        fails[ip] = lst
        if len(lst) >= mx:
            banned[ip] = t + datetime.timedelta(seconds=bt)
            fails[ip] = []
            events.append({"ip": ip, "ban": t.isoformat(), "unban": banned[ip].isoformat()})
    events.sort(key=lambda e: (e["ban"], e["ip"]))
    print(json.dumps(events))


main(*sys.argv[1:3])
PY
