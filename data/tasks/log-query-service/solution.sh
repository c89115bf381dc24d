#!/bin/bash
cat > /app/logsvc.py <<'PY'
import argparse
import datetime as dt
import gzip
import json
import os
import re
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlparse

ACC = re.compile(r'^(\S+) \S+ \S+ \[([^\]]+)\] "[^"]*" (\d{3}) (\d+|-)')
FAIL = re.compile(r"Failed password for (?:invalid user )?(\S+) from (\S+) port")


def lines(d, kind):
    for n in sorted(os.listdir(d)):
        if re.fullmatch(kind + r"\.log(\.\d+(\.gz)?)?", n):
            p = os.path.join(d, n)
            with (gzip.open(p, "rt") if n.endswith(".gz") else open(p)) as f:
                yield from f.read().splitlines()


def access(d):
    for line in lines(d, "access"):
        m = ACC.match(line)
        if m:
            yield m.group(1), dt.datetime.strptime(m.group(2), "%d/%b/%Y:%H:%M:%S %z"), m.group(3), \
                0 if m.group(4) == "-" else int(m.group(4))


class Bad(Exception):
    pass


def ts(q, k):
    if k not in q:
        return None
    try:
        t = dt.datetime.fromisoformat(q[k][0])
    except ValueError:
        raise Bad(f"bad timestamp {k}")
    if t.tzinfo is None:
        raise Bad(f"timestamp {k} needs an offset")
    return t


class H(BaseHTTPRequestHandler):
    def send(self, code, obj):
        body = json.dumps(obj).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self):
        u = urlparse(self.path)
        q = parse_qs(u.query)
        d = self.server.logdir
        try:
            if u.path == "/health":
                return self.send(200, {"status": "ok"})
            if u.path == "/requests":
                a, b = ts(q, "from"), ts(q, "to")
                by = {}
                for ip, t, st, _ in access(d):
                    if (a is None or t >= a) and (b is None or t < b):
                        by[st] = by.get(st, 0) + 1
                return self.send(200, {"total": sum(by.values()), "by_status": by})
            if u.path == "/top-clients":
                n = q.get("n", ["5"])[0]
                if not n.isdigit() or int(n) < 1:
                    raise Bad("n must be a positive integer")
                agg = {}
                for ip, _, _, b in access(d):
                    r = agg.setdefault(ip, [0, 0])
                    r[0] += 1
                    r[1] += b
                rows = sorted(agg.items(), key=lambda kv: (-kv[1][0], kv[0]))[:int(n)]
                return self.send(200, {"clients": [{"ip": i, "requests": r, "bytes": b} for i, (r, b) in rows]})
            if u.path == "/failed-logins":
                if not q.get("user"):
                    raise Bad("user is required")
                user, c, ips = q["user"][0], 0, set()
                for line in lines(d, "auth"):
                    m = FAIL.search(line)
                    if m and m.group(1) == user:
                        c += 1
                        ips.add(m.group(2))
                return self.send(200, {"user": user, "failed": c, "ips": sorted(ips)})
            self.send(404, {"error": f"unknown path {u.path}"})
        except Bad as e:
            self.send(400, {"error": str(e)})

    def log_message(self, *a):
        pass


ap = argparse.ArgumentParser()
ap.add_argument("--logdir", required=True)
ap.add_argument("--port", type=int, required=True)
args = ap.parse_args()
srv = ThreadingHTTPServer(("127.0.0.1", args.port), H)
srv.logdir = args.logdir
srv.serve_forever()
PY
