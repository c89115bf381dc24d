import socket
import subprocess
import tempfile
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest


class Handler(BaseHTTPRequestHandler):
    def do_GET(self):
        routes = {"/health": (200, "status: ok"), "/": (200, "<h1>home</h1>"), "/created": (201, "made"),
                  "/err": (500, "status: ok"), "/degraded": (200, "status: degraded"),
                  "/moved": (302, "status: ok"), "/slow": (200, "status: ok")}
        code, body = routes.get(self.path, (404, "nope"))
        if self.path == "/slow":
            time.sleep(6)
        data = body.encode()
        self.send_response(code)
        if code == 302:
            self.send_header("Location", "/health")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        try:
            self.wfile.write(data)
        except OSError:
            pass

    def log_message(self, *a):
        pass


@pytest.fixture(scope="module")
def port():
    srv = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    srv.daemon_threads = True
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    yield srv.server_address[1]
    srv.shutdown()


def closed_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def run(text):
    with tempfile.TemporaryDirectory() as d:
        f = Path(d, "targets.txt")
        f.write_text(text)
        r = subprocess.run(["/app/healthcheck.sh", str(f)], capture_output=True, text=True, timeout=60)
    return r.returncode, [" ".join(l.split()) for l in r.stdout.splitlines() if l.strip()]


def test_all_healthy(port):
    code, lines = run(f"# comment\n\napi http://127.0.0.1:{port}/health ok\n"
                      f"home   http://127.0.0.1:{port}/\nnew\thttp://127.0.0.1:{port}/created\n")
    assert lines == ["api OK", "home OK", "new OK", "SUMMARY ok=3 fail=0"]
    assert code == 0


def test_failures_detected(port):
    dead = closed_port()
    code, lines = run(f"api http://127.0.0.1:{port}/health ok\n"
                      f"errors http://127.0.0.1:{port}/err\n"
                      f"degraded http://127.0.0.1:{port}/degraded ok\n"
                      f"down http://127.0.0.1:{dead}/health\n"
                      f"missing http://127.0.0.1:{port}/missing\n"
                      f"moved http://127.0.0.1:{port}/moved ok\n"
                      f"slow http://127.0.0.1:{port}/slow ok\n"
                      f"home http://127.0.0.1:{port}/ home\n")
    assert lines == ["api OK", "errors FAIL", "degraded FAIL", "down FAIL", "missing FAIL", "moved FAIL",
                     "slow FAIL", "home OK", "SUMMARY ok=2 fail=6"]
    assert code == 1


def test_missing_targets_file(port):
    r = subprocess.run(["/app/healthcheck.sh", "/nonexistent/targets.txt"], capture_output=True, text=True, timeout=30)
    assert r.returncode == 2 and r.stderr.strip()
    # the same script still checks a real targets file (a bare `exit 2` earns nothing)
    assert run(f"solo http://127.0.0.1:{port}/created made\n") == (0, ["solo OK", "SUMMARY ok=1 fail=0"])
