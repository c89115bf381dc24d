import http.client
import json
import socket
import subprocess
import tempfile
import threading
import time
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


def make_backend(name, port=0):
    class H(BaseHTTPRequestHandler):
        def handle_any(self):
            n = int(self.headers.get("Content-Length") or 0)
            body = self.rfile.read(n).decode() if n else ""
            status = 200
            if "/fail/" in self.path:
                status = 500
            data = json.dumps({"backend": name, "method": self.command, "path": self.path, "body": body,
                               "xff": self.headers.get("X-Forwarded-For"),
                               "xfh": self.headers.get("X-Forwarded-Host"),
                               "token": self.headers.get("X-Token")}).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("X-Backend", name)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        do_GET = do_POST = do_PUT = do_DELETE = do_PATCH = handle_any

        def log_message(self, *a):
            pass

    srv = ThreadingHTTPServer(("127.0.0.1", port), H)
    srv.daemon_threads = True
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    return srv


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextmanager
def proxy(config):
    with tempfile.TemporaryDirectory() as d:
        path = config if isinstance(config, str) else f"{d}/c.json"
        if not isinstance(config, str):
            with open(path, "w") as f:
                json.dump(config, f)
        port = free_port()
        p = subprocess.Popen(["python3", "/app/proxy/proxy.py", "--config", path, "--port", str(port)],
                             stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        try:
            for _ in range(150):
                if p.poll() is not None:
                    raise AssertionError("proxy exited: " + p.stderr.read().decode()[-2000:])
                try:
                    socket.create_connection(("127.0.0.1", port), timeout=1).close()
                    break
                except OSError:
                    time.sleep(0.1)
            yield port
        finally:
            p.kill()
            p.wait()


def req(port, method, path, host="example.test", body=None, headers=None):
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    h = {"Host": host}
    h.update(headers or {})
    c.request(method, path, body=body, headers=h)
    r = c.getresponse()
    data = r.read()
    c.close()
    try:
        payload = json.loads(data)
    except ValueError:
        payload = data
    return r.status, payload, {k.lower(): v for k, v in r.getheaders()}


def addr(srv):
    return f"127.0.0.1:{srv.server_address[1]}"


def test_health_and_no_route():
    b = make_backend("only")
    cfg = {"routes": [{"host": "a.test", "prefix": "/x/", "strip_prefix": False, "backends": [addr(b)]},
                      {"host": "*", "prefix": "/api/", "strip_prefix": False, "backends": [addr(b)]}]}
    with proxy(cfg) as port:
        code, body, _ = req(port, "GET", "/__proxy/health", host="whatever.test")
        assert code == 200 and body == {"status": "ok", "routes": 2}
        code, body, h = req(port, "GET", "/nothing/here", host="b.test")
        assert code == 404 and isinstance(body, dict) and "error" in body
        code, body, _ = req(port, "GET", "/x/1", host="b.test")
        assert code == 404
        code, body, _ = req(port, "GET", "/api/1", host="b.test")
        assert code == 200 and body["backend"] == "only" and body["path"] == "/api/1", (code, body)
    b.shutdown()


def test_routing_and_prefix_strip():
    bs = {n: make_backend(n) for n in ("exact-long", "exact-short", "star-long", "star-root")}
    cfg = {"routes": [
        {"host": "*", "prefix": "/", "strip_prefix": False, "backends": [addr(bs["star-root"])]},
        {"host": "Shop.Test", "prefix": "/api/", "strip_prefix": True, "backends": [addr(bs["exact-short"])]},
        {"host": "shop.test", "prefix": "/api/v2/", "strip_prefix": True, "backends": [addr(bs["exact-long"])]},
        {"host": "*", "prefix": "/api/v2/users/", "strip_prefix": False, "backends": [addr(bs["star-long"])]}]}
    with proxy(cfg) as port:
        cases = [("shop.test:8080", "/api/v2/users/7?full=1", "exact-long", "/users/7?full=1"),
                 ("SHOP.test", "/api/orders", "exact-short", "/orders"),
                 ("shop.test", "/api/", "exact-short", "/"),
                 ("shop.test", "/apiary", "star-root", "/apiary"),
                 ("other.test", "/api/v2/users/7", "star-long", "/api/v2/users/7"),
                 ("other.test", "/api/v2/x?q=a/b", "star-root", "/api/v2/x?q=a/b")]
        for host, path, backend, fwd in cases:
            code, body, h = req(port, "GET", path, host=host)
            assert code == 200 and body["backend"] == backend and body["path"] == fwd, (host, path, body)
            assert h.get("x-backend") == backend
    for b in bs.values():
        b.shutdown()


def test_round_robin_and_failover():
    b1, b2, b3 = make_backend("b1"), make_backend("b2"), make_backend("b3")
    dead1, dead2 = free_port(), free_port()
    cfg = {"routes": [
        {"host": "*", "prefix": "/rr/", "strip_prefix": False, "backends": [addr(b1), addr(b2), addr(b3)]},
        {"host": "*", "prefix": "/fo/", "strip_prefix": False,
         "backends": [f"127.0.0.1:{dead1}", addr(b2), f"127.0.0.1:{dead2}"]},
        {"host": "*", "prefix": "/dead/", "strip_prefix": False,
         "backends": [f"127.0.0.1:{dead1}", f"127.0.0.1:{dead2}"]}]}
    with proxy(cfg) as port:
        seen = [req(port, "GET", "/rr/x")[1]["backend"] for _ in range(7)]
        assert seen == ["b1", "b2", "b3", "b1", "b2", "b3", "b1"]
        for _ in range(4):
            code, body, _ = req(port, "GET", "/fo/y")
            assert code == 200 and body["backend"] == "b2"
        code, body, _ = req(port, "GET", "/dead/z")
        assert code == 502 and isinstance(body, dict) and "error" in body
        code, body, h = req(port, "GET", "/rr/fail/now")
        assert code == 500 and body["backend"] == "b2" and h.get("x-backend") == "b2"
    for b in (b1, b2, b3):
        b.shutdown()


def test_methods_bodies_and_headers():
    b = make_backend("echo")
    cfg = {"routes": [{"host": "*", "prefix": "/svc/", "strip_prefix": True, "backends": [addr(b)]}]}
    with proxy(cfg) as port:
        for method in ("POST", "PUT", "PATCH", "DELETE"):
            payload = json.dumps({"m": method, "n": list(range(50))})
            code, body, _ = req(port, method, "/svc/items/1", host="api.test:81", body=payload,
                                headers={"Content-Type": "application/json", "X-Token": "s3cret"})
            assert code == 200 and body["method"] == method and body["body"] == payload and body["path"] == "/items/1"
            assert body["token"] == "s3cret" and body["xfh"] == "api.test:81" and body["xff"] == "127.0.0.1"
        code, body, _ = req(port, "GET", "/svc/", headers={"X-Forwarded-For": "10.0.0.9"})
        assert body["xff"] == "10.0.0.9, 127.0.0.1" and body["path"] == "/"
    b.shutdown()


def test_production_routes():
    names = {9101: "api-1", 9102: "api-2", 9201: "static", 9301: "web", 9401: "admin"}
    bs = [make_backend(n, p) for p, n in names.items()]
    try:
        with proxy("/app/proxy/routes.json") as port:
            got = [(req(port, "GET", p, host=h)[1]) for h, p in [
                ("api.shop.test", "/v1/orders?id=3"), ("api.shop.test", "/v1/orders"),
                ("api.shop.test", "/v1/admin/users"), ("www.shop.test", "/static/css/site.css"),
                ("api.shop.test", "/static/logo.png"), ("www.shop.test", "/checkout"),
                ("admin.shop.test", "/static/a.js"), ("admin.shop.test", "/dashboard"), ("api.shop.test", "/v2/x")]]
            assert [(g["backend"], g["path"]) for g in got] == [
                ("api-1", "/orders?id=3"), ("api-2", "/orders"), ("admin", "/v1/admin/users"),
                ("static", "/css/site.css"), ("static", "/logo.png"), ("web", "/checkout"),
                ("admin", "/static/a.js"), ("admin", "/dashboard"), ("web", "/v2/x")]
    finally:
        for b in bs:
            b.shutdown()
