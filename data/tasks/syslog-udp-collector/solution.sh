#!/bin/bash
cat > /app/syslogd.py <<'PY'
import argparse
import os
import re
import socket

FAC = {0: "kern", 1: "user", 2: "mail", 3: "daemon", 4: "auth", 5: "syslog", 6: "lpr", 7: "news", 8: "uucp",
       9: "cron", 10: "authpriv", 11: "ftp", **{16 + i: f"local{i}" for i in range(8)}}
SEV = ["emerg", "alert", "crit", "err", "warning", "notice", "info", "debug"]


def skip_sd(s):
    if s.startswith("-"):
        return s[1:]
    i = 0
    while i < len(s) and s[i] == "[":
        inq = False
        i += 1
        while i < len(s):
            c = s[i]
            if c == "\\" and inq:
                i += 2
                continue
            if c == '"':
                inq = not inq
            elif c == "]" and not inq:
                i += 1
                break
            i += 1
    return s[i:]


def parse(msg):
    m = re.match(r"<(\d{1,3})>", msg)
    if not m or int(m.group(1)) > 191:
        return None
    pri, rest = int(m.group(1)), msg[m.end():]
    if rest.startswith("1 "):
        parts = rest[2:].split(" ", 5)
        _, host, app, _, _, tail = parts if len(parts) == 6 else (parts + [""] * 6)[:6]
        tail = skip_sd(tail)
        text = tail[1:] if tail.startswith(" ") else tail
    else:
        m2 = re.match(r"\w{3} [ \d]\d \d\d:\d\d:\d\d (\S+) ([^:\s]+?)(\[[^\]]*\])?: ?(.*)$", rest, re.S)
        if not m2:
            return None
        host, app, text = m2.group(1), m2.group(2), m2.group(4)
    host = "unknown" if host in ("-", "") else host
    app = "unknown" if app in ("-", "") else app
    return FAC.get(pri // 8, f"fac{pri // 8}"), SEV[pri % 8], pri % 8, host, app, text


def append(path, line):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "a") as f:
        f.write(line + "\n")


ap = argparse.ArgumentParser()
ap.add_argument("--port", type=int, required=True)
ap.add_argument("--dir", required=True)
a = ap.parse_args()
sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
sock.bind(("127.0.0.1", a.port))
while True:
    data, _ = sock.recvfrom(65535)
    msg = data.decode("utf-8", "replace").rstrip("\n")
    p = parse(msg)
    if p is None:
        append(os.path.join(a.dir, "invalid.log"), msg)
        continue
    fac, sev, sevn, host, app, text = p
    append(os.path.join(a.dir, host, f"{fac}.log"), f"{sev} {app}: {text}")
    if sevn <= 3:
        append(os.path.join(a.dir, "alerts.log"), f"{host} {fac}.{sev} {app}: {text}")
PY
