import json
import os
import signal
import socket
import subprocess
import tempfile
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def get(port, path):
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=10) as r:
            return r.status, r.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode()


class Server:
    def __init__(self, d):
        self.d, self.port = Path(d), free_port()
        self.cfg, self.pidfile = self.d / "cfg.json", self.d / "run" / "kv.pid"
        self.pidfile.parent.mkdir()
        self.write({"hello": "world"}, "kv v1")
        self.err = open(self.d / "stderr.txt", "w")
        self.proc = subprocess.Popen(["python3", "/app/svc/kvserver.py", "--config", str(self.cfg)],
                                     stdout=subprocess.DEVNULL, stderr=self.err)
        for _ in range(150):
            if self.proc.poll() is not None:
                raise AssertionError("server exited early: " + (self.d / "stderr.txt").read_text()[-2000:])
            try:
                get(self.port, "/__status")
                break
            except OSError:
                time.sleep(0.1)

    def write(self, responses, banner, port=None, raw=None):
        self.cfg.write_text(raw if raw is not None else json.dumps(
            {"port": port or self.port, "pidfile": str(self.pidfile), "banner": banner, "responses": responses}))

    def status(self):
        return json.loads(get(self.port, "/__status")[1])

    def wait_reloads(self, n):
        for _ in range(100):
            if self.status()["reloads"] == n:
                return True
            time.sleep(0.05)
        return False

    def stderr(self):
        self.err.flush()
        return (self.d / "stderr.txt").read_text()

    def close(self):
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait()
        self.err.close()


@pytest.fixture
def server():
    with tempfile.TemporaryDirectory() as d:
        s = Server(d)
        try:
            yield s
        finally:
            s.close()


def test_pidfile_written(server):
    for _ in range(50):
        if server.pidfile.exists() and server.pidfile.read_text().strip():
            break
        time.sleep(0.1)
    assert server.pidfile.read_text() == f"{server.proc.pid}\n"
    assert get(server.port, "/hello") == (200, "world")


def test_sighup_reload(server):
    assert server.status()["reloads"] == 0
    server.write({"hello": "there", "new": "key"}, "kv v2", port=free_port())
    server.proc.send_signal(signal.SIGHUP)
    assert server.wait_reloads(1), server.stderr()
    assert get(server.port, "/hello") == (200, "there") and get(server.port, "/new") == (200, "key")
    assert server.status()["banner"] == "kv v2" and server.status()["pid"] == server.proc.pid
    server.write({"only": "this"}, "kv v3")
    server.proc.send_signal(signal.SIGHUP)
    assert server.wait_reloads(2)
    assert get(server.port, "/hello")[0] == 404 and get(server.port, "/only") == (200, "this")
    assert server.stderr().count("reload ok") == 2


def test_invalid_reload_keeps_old_config(server):
    server.write({"hello": "v2"}, "kv v2")
    server.proc.send_signal(signal.SIGHUP)
    assert server.wait_reloads(1)
    for bad in ("{not json", json.dumps({"port": 1, "banner": "x", "responses": ["a"]}),
                json.dumps({"port": 1, "banner": 5, "responses": {"a": "b"}}),
                json.dumps({"port": 1, "banner": "x", "responses": {"a": 3}})):
        server.write(None, None, raw=bad)
        n = server.stderr().count("reload failed")
        server.proc.send_signal(signal.SIGHUP)
        for _ in range(100):
            if server.stderr().count("reload failed") > n:
                break
            time.sleep(0.05)
        assert server.stderr().count("reload failed") == n + 1, bad
        assert server.proc.poll() is None
        assert get(server.port, "/hello") == (200, "v2")
        assert server.status() == {"pid": server.proc.pid, "banner": "kv v2", "reloads": 1}


def test_graceful_sigterm(server):
    for _ in range(50):
        if server.pidfile.exists():
            break
        time.sleep(0.1)
    assert server.pidfile.exists()
    result = {}

    def slow():
        result["r"] = get(server.port, "/slow")

    t = threading.Thread(target=slow)
    t.start()
    time.sleep(0.5)
    server.proc.send_signal(signal.SIGTERM)
    t.join(timeout=20)
    assert result.get("r") == (200, "slow done")
    assert server.proc.wait(timeout=20) == 0
    assert not server.pidfile.exists()
    with pytest.raises(OSError):
        get(server.port, "/hello")
