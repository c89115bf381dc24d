import http.client
import json
import socket
import subprocess
import sys
import threading
import time
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    p = s.getsockname()[1]
    s.close()
    return p


class Upstream:
    def __init__(self):
        self.log = []
        self.counter = 0
        up = self

        class H(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *a):
                pass

            def any(self):
                n = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(n) if n else b""
                up.counter += 1
                up.log.append((self.command, self.path, dict(self.headers), body))
                path = urllib.parse.urlsplit(self.path).path
                status, extra = 200, []
                if path == "/nostore":
                    extra.append(("Cache-Control", "no-store"))
                if path == "/private":
                    extra.append(("Cache-Control", "private, max-age=60"))
                if path == "/missing":
                    status = 404
                payload = json.dumps({"n": up.counter, "method": self.command, "path": self.path,
                                      "body": body.decode()}).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("X-Upstream", "yes")
                self.send_header("Keep-Alive", "timeout=5")
                for k, v in extra:
                    self.send_header(k, v)
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

            do_GET = do_POST = do_PUT = do_DELETE = do_PATCH = any

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), H)
        self.port = self.server.server_address[1]
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def hits(self, path):
        return sum(1 for m, p, h, b in self.log if p == path)

    def close(self):
        self.server.shutdown()
        self.server.server_close()


class Proxy:
    def __init__(self, upstream_port, rate=1000, burst=1000, ttl=300):
        self.port = free_port()
        self.proc = subprocess.Popen([sys.executable, "/app/proxy/gateway.py", "--port", str(self.port), "--upstream",
                                      "http://127.0.0.1:%d" % upstream_port, "--rate", str(rate), "--burst", str(burst),
                                      "--cache-ttl", str(ttl)], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, cwd="/tmp")
        deadline = time.time() + 60
        while time.time() < deadline:
            if self.proc.poll() is not None:
                raise AssertionError("proxy exited: " + self.proc.stderr.read().decode()[-2000:])
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=1).close()
                return
            except OSError:
                time.sleep(0.1)
        raise AssertionError("proxy did not start")

    def __call__(self, method, path, body=None, headers=None):
        c = http.client.HTTPConnection("127.0.0.1", self.port, timeout=30)
        c.request(method, path, body=body, headers=headers or {})
        r = c.getresponse()
        data = r.read()
        c.close()
        return r.status, {k.lower(): v for k, v in r.getheaders()}, data

    def stop(self):
        self.proc.kill()
        self.proc.wait(timeout=30)


@pytest.fixture
def up():
    u = Upstream()
    yield u
    u.close()


def test_forwarding(up):
    p = Proxy(up.port)
    try:
        st, h, body = p("POST", "/echo?x=1&y=%20z", body=b'{"a": 1}', headers={"Content-Type": "application/json", "X-Custom": "42"})
        assert st == 200
        data = json.loads(body)
        assert data["method"] == "POST" and data["path"] == "/echo?x=1&y=%20z" and data["body"] == '{"a": 1}'
        assert h["x-upstream"] == "yes" and "keep-alive" not in h and int(h["content-length"]) == len(body)
        method, path, hdrs, _ = up.log[-1]
        hdrs = {k.lower(): v for k, v in hdrs.items()}
        assert hdrs.get("x-custom") == "42" and hdrs.get("x-forwarded-for") == "127.0.0.1"
        st, h, body = p("GET", "/missing")
        assert st == 404 and json.loads(body)["path"] == "/missing"
        for m in ["PUT", "DELETE", "PATCH"]:
            st, _, body = p(m, "/thing", body=b"zz")
            assert st == 200 and json.loads(body)["method"] == m
    finally:
        p.stop()


def test_cache_behaviour(up):
    p = Proxy(up.port)
    try:
        st, h, b1 = p("GET", "/items?page=1")
        assert st == 200 and h["x-cache"] == "MISS"
        st, h, b2 = p("GET", "/items?page=1")
        assert h["x-cache"] == "HIT" and b2 == b1 and h["x-upstream"] == "yes"
        assert up.hits("/items?page=1") == 1
        assert p("GET", "/items?page=2")[1]["x-cache"] == "MISS"
        st, h, b3 = p("GET", "/items?page=1", headers={"Cache-Control": "no-cache"})
        assert h["x-cache"] == "MISS" and b3 != b1
        assert p("GET", "/items?page=1")[2] == b3
        for path in ["/nostore", "/private", "/missing"]:
            p("GET", path)
            assert p("GET", path)[1]["x-cache"] == "MISS"
            assert up.hits(path) == 2
        assert p("POST", "/items", body=b"new")[0] == 200
        assert p("GET", "/items?page=1")[1]["x-cache"] == "MISS"
        assert p("GET", "/items?page=2")[1]["x-cache"] == "MISS"
        p("GET", "/other")
        p("DELETE", "/items")
        assert p("GET", "/other")[1]["x-cache"] == "HIT"
    finally:
        p.stop()
    short = Proxy(up.port, ttl=0.5)
    try:
        short("GET", "/ttl")
        time.sleep(1.2)
        assert short("GET", "/ttl")[1]["x-cache"] == "MISS"
        assert up.hits("/ttl") == 2
    finally:
        short.stop()


def test_rate_limit(up):
    p = Proxy(up.port, rate=0.001, burst=3)
    try:
        assert [p("GET", "/r", headers={"X-Client-Id": "alice"})[0] for _ in range(3)] == [200, 200, 200]
        st, h, body = p("GET", "/r", headers={"X-Client-Id": "alice"})
        assert st == 429 and json.loads(body) == {"error": "rate limited"}
        assert 990 <= int(h["retry-after"]) <= 1000
        assert up.hits("/r") == 1
        assert p("POST", "/r", headers={"X-Client-Id": "alice"}, body=b"x")[0] == 429
        assert p("GET", "/r", headers={"X-Client-Id": "bob"})[0] == 200
        assert [p("GET", "/r")[0] for _ in range(4)] == [200, 200, 200, 429]
        st, _, body = p("GET", "/_gateway/stats")
        assert st == 200 and json.loads(body)["limited"] == 3
    finally:
        p.stop()


def test_bad_gateway_and_stats(up):
    dead = Proxy(free_port())
    try:
        st, h, body = dead("GET", "/x")
        assert st == 502 and json.loads(body) == {"error": "bad gateway"}
        assert json.loads(dead("GET", "/_gateway/stats")[2]) == {"hits": 0, "misses": 0, "limited": 0, "upstream_errors": 1}
    finally:
        dead.stop()
    p = Proxy(up.port, rate=0.001, burst=4)
    try:
        for _ in range(3):
            p("GET", "/s")
        p("POST", "/s", body=b"1")
        p("GET", "/s")
        for _ in range(10):
            st, _, body = p("GET", "/_gateway/stats")
            assert st == 200
        assert json.loads(body) == {"hits": 2, "misses": 2, "limited": 1, "upstream_errors": 0}
        assert up.hits("/_gateway/stats") == 0
    finally:
        p.stop()
