#!/bin/bash
set -e
cat > /app/proxy/gateway.py <<'PY'
"""gateway: caching, rate-limiting reverse proxy (see SPEC.md)."""
import argparse
import http.client
import json
import math
import threading
import time
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

HOP = {"connection", "keep-alive", "proxy-authenticate", "proxy-authorization", "te", "trailer",
       "transfer-encoding", "upgrade"}
CFG, LOCK = {}, threading.Lock()
BUCKETS, CACHE = {}, {}
STATS = {"hits": 0, "misses": 0, "limited": 0, "upstream_errors": 0}


def take_token(client):
    now = time.monotonic()
    with LOCK:
        tok, last = BUCKETS.get(client, (float(CFG["burst"]), now))
        tok = min(float(CFG["burst"]), tok + (now - last) * CFG["rate"])
        if tok >= 1:
            BUCKETS[client] = (tok - 1, now)
            return None
        BUCKETS[client] = (tok, now)
        return max(1, math.ceil((1 - tok) / CFG["rate"]))


class H(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *a):
        pass

    def send(self, status, headers, body):
        self.send_response(status)
        for k, v in headers:
            if k.lower() not in HOP and k.lower() != "content-length":
                self.send_header(k, v)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def send_json(self, status, obj, extra=()):
        self.send(status, [("Content-Type", "application/json"), *extra], json.dumps(obj).encode())

    def handle_any(self):
        n = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(n) if n else None
        if self.command == "GET" and self.path == "/_gateway/stats":
            with LOCK:
                return self.send_json(200, dict(STATS))
        client = self.headers.get("X-Client-Id") or self.client_address[0]
        wait = take_token(client)
        if wait is not None:
            with LOCK:
                STATS["limited"] += 1
            return self.send_json(429, {"error": "rate limited"}, [("Retry-After", str(wait))])
        path_only = urllib.parse.urlsplit(self.path).path
        if self.command == "GET" and "no-cache" not in (self.headers.get("Cache-Control") or ""):
            with LOCK:
                hit = CACHE.get(self.path)
                if hit and hit[0] > time.monotonic():
                    STATS["hits"] += 1
                    status, headers, data = hit[1]
                else:
                    hit = None
            if hit:
                return self.send(status, [h for h in headers if h[0].lower() != "x-cache"] + [("X-Cache", "HIT")], data)
        headers = {k: v for k, v in self.headers.items() if k.lower() not in HOP and k.lower() != "host"}
        headers["X-Forwarded-For"] = self.client_address[0]
        try:
            c = http.client.HTTPConnection(CFG["host"], CFG["port"], timeout=30)
            c.request(self.command, self.path, body=body, headers=headers)
            r = c.getresponse()
            data = r.read()
            rheaders = r.getheaders()
            c.close()
        except OSError:
            with LOCK:
                STATS["upstream_errors"] += 1
            return self.send_json(502, {"error": "bad gateway"})
        with LOCK:
            STATS["misses"] += 1
            cc = (r.getheader("Cache-Control") or "").lower()
            if self.command == "GET" and r.status == 200 and "no-store" not in cc and "private" not in cc:
                CACHE[self.path] = (time.monotonic() + CFG["ttl"], (r.status, rheaders, data))
            if self.command in ("POST", "PUT", "PATCH", "DELETE") and 200 <= r.status < 300:
                for k in [k for k in CACHE if urllib.parse.urlsplit(k).path == path_only]:
                    del CACHE[k]
        self.send(r.status, [h for h in rheaders if h[0].lower() != "x-cache"] + [("X-Cache", "MISS")], data)

    do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = do_HEAD = do_OPTIONS = handle_any


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--port", type=int, required=True)
    p.add_argument("--upstream", required=True)
    p.add_argument("--rate", type=float, required=True)
    p.add_argument("--burst", type=int, required=True)
    p.add_argument("--cache-ttl", type=float, required=True)
    a = p.parse_args()
    u = urllib.parse.urlsplit(a.upstream)
    CFG.update(host=u.hostname, port=u.port or 80, rate=a.rate, burst=a.burst, ttl=a.cache_ttl)
    ThreadingHTTPServer(("127.0.0.1", a.port), H).serve_forever()


if __name__ == "__main__":
    main()
PY
