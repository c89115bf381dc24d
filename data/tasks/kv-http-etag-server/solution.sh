#!/bin/bash
set -e
cat > /app/kvserver.py <<'PY'
import argparse
import base64
import json
import os
import threading
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

LOCK = threading.Lock()
STORE = {}  # key -> [version, bytes]
DATA = None


def save():
    tmp = DATA + ".tmp"
    with open(tmp, "w") as f:
        json.dump({k: [v, base64.b64encode(b).decode()] for k, (v, b) in STORE.items()}, f)
    os.replace(tmp, DATA)


class H(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *a):
        pass

    def send(self, code, body=b"", ctype="application/octet-stream", etag=None):
        self.send_response(code)
        if etag:
            self.send_header("ETag", etag)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def err(self, code, msg):
        self.send(code, json.dumps({"error": msg}).encode(), "application/json")

    def key(self):
        u = urllib.parse.urlsplit(self.path)
        if u.path.startswith("/kv/") and len(u.path) > 4:
            return urllib.parse.unquote(u.path[4:])
        return None

    def pre(self, cur):
        im = self.headers.get("If-Match")
        if im is not None and (cur is None or im.strip() != '"%d"' % cur[0]):
            return False
        inm = self.headers.get("If-None-Match")
        if self.command != "GET" and inm is not None and inm.strip() == "*" and cur is not None:
            return False
        return True

    def do_GET(self):
        u = urllib.parse.urlsplit(self.path)
        if u.path == "/kv":
            prefix = urllib.parse.parse_qs(u.query).get("prefix", [""])[0]
            with LOCK:
                keys = sorted(k for k in STORE if k.startswith(prefix))
            return self.send(200, json.dumps(keys).encode(), "application/json")
        k = self.key()
        if k is None:
            return self.err(404, "not found")
        with LOCK:
            cur = STORE.get(k)
        if cur is None:
            return self.err(404, "no such key")
        tag = '"%d"' % cur[0]
        if self.headers.get("If-None-Match", "").strip() == tag:
            return self.send(304, b"", etag=tag)
        self.send(200, cur[1], etag=tag)

    def do_PUT(self):
        k = self.key()
        body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
        if k is None:
            return self.err(404 if not self.path.startswith("/kv") else 405, "bad path")
        with LOCK:
            cur = STORE.get(k)
            if not self.pre(cur):
                return self.err(412, "precondition failed")
            v = cur[0] + 1 if cur else 1
            STORE[k] = [v, body]
            save()
        self.send(201 if cur is None else 200, b"", etag='"%d"' % v)

    def do_DELETE(self):
        k = self.key()
        if k is None:
            return self.err(405 if self.path.split("?")[0] == "/kv" else 404, "bad path")
        with LOCK:
            cur = STORE.get(k)
            if cur is None:
                return self.err(404, "no such key")
            if not self.pre(cur):
                return self.err(412, "precondition failed")
            del STORE[k]
            save()
        self.send(204)

    def other(self):
        n = int(self.headers.get("Content-Length", 0) or 0)
        if n:
            self.rfile.read(n)
        self.err(405 if self.path.startswith("/kv") else 404, "method not allowed")

    do_POST = do_PATCH = other


def main():
    global DATA
    p = argparse.ArgumentParser()
    p.add_argument("--port", type=int, required=True)
    p.add_argument("--data", required=True)
    a = p.parse_args()
    DATA = a.data
    if os.path.exists(DATA):
        for k, (v, b) in json.load(open(DATA)).items():
            STORE[k] = [v, base64.b64decode(b)]
    ThreadingHTTPServer(("127.0.0.1", a.port), H).serve_forever()


main()
PY
