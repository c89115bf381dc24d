#!/bin/bash
set -e
cat > /app/proxy/routes.json <<'JSON'
{
  "routes": [
    {"host": "api.shop.test", "prefix": "/v1/", "strip_prefix": true, "backends": ["127.0.0.1:9101", "127.0.0.1:9102"]},
    {"host": "api.shop.test", "prefix": "/v1/admin/", "strip_prefix": false, "backends": ["127.0.0.1:9401"]},
    {"host": "*", "prefix": "/static/", "strip_prefix": true, "backends": ["127.0.0.1:9201"]},
    {"host": "*", "prefix": "/", "strip_prefix": false, "backends": ["127.0.0.1:9301"]},
    {"host": "admin.shop.test", "prefix": "/", "strip_prefix": false, "backends": ["127.0.0.1:9401"]}
  ]
}
JSON
cat > /app/proxy/proxy.py <<'PY'
import argparse
import http.client
import itertools
import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

HOP = {"connection", "keep-alive", "proxy-authenticate", "proxy-authorization", "te", "trailers",
       "transfer-encoding", "upgrade", "proxy-connection"}


class Route:
    def __init__(self, spec):
        self.host = spec["host"].lower()
        self.prefix = spec["prefix"]
        self.strip = bool(spec.get("strip_prefix", False))
        self.backends = list(spec["backends"])
        self.counter = itertools.count()
        self.lock = threading.Lock()

    def order(self):
        with self.lock:
            start = next(self.counter) % len(self.backends)
        return self.backends[start:] + self.backends[:start]


def pick(routes, host, path):
    cands = [r for r in routes if r.host in ("*", host) and path.startswith(r.prefix)]
    if not cands:
        return None
    return max(cands, key=lambda r: (r.host != "*", len(r.prefix)))


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    routes = []

    def reply_json(self, code, obj):
        body = json.dumps(obj).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def handle_any(self):
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length else None
        raw_host = self.headers.get("Host", "")
        host = raw_host.rsplit(":", 1)[0].lower() if raw_host else ""
        path, sep, query = self.path.partition("?")
        if path == "/__proxy/health" and self.command == "GET":
            return self.reply_json(200, {"status": "ok", "routes": len(self.routes)})
        route = pick(self.routes, host, path)
        if route is None:
            return self.reply_json(404, {"error": f"no route for {host}{path}"})
        if route.strip:
            path = path[len(route.prefix):]
            if not path.startswith("/"):
                path = "/" + path
        target = path + (sep + query if sep else "")
        headers = {k: v for k, v in self.headers.items() if k.lower() not in HOP}
        xff = self.headers.get("X-Forwarded-For")
        headers["X-Forwarded-For"] = f"{xff}, {self.client_address[0]}" if xff else self.client_address[0]
        headers["X-Forwarded-Host"] = raw_host
        for backend in route.order():
            bhost, bport = backend.rsplit(":", 1)
            conn = http.client.HTTPConnection(bhost, int(bport), timeout=30)
            try:
                conn.request(self.command, target, body=body, headers=headers)
                resp = conn.getresponse()
            except (ConnectionRefusedError, OSError):
                conn.close()
                continue
            data = resp.read()
            self.send_response(resp.status, resp.reason)
            for k, v in resp.getheaders():
                if k.lower() not in HOP and k.lower() not in ("content-length", "server", "date"):
                    self.send_header(k, v)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)
            conn.close()
            return
        self.reply_json(502, {"error": "no backend available"})

    do_GET = do_POST = do_PUT = do_DELETE = do_PATCH = do_HEAD = handle_any

    def log_message(self, *args):
        pass


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--config", required=True)
    ap.add_argument("--port", type=int, required=True)
    a = ap.parse_args()
    Handler.routes = [Route(r) for r in json.load(open(a.config))["routes"]]
    srv = ThreadingHTTPServer(("127.0.0.1", a.port), Handler)
    srv.daemon_threads = True
    srv.serve_forever()
PY
