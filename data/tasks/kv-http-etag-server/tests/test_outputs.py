import http.client
import json
import os
import random
import socket
import subprocess
import sys
import threading
import time
import urllib.parse

import pytest


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


class Server:
    def __init__(self, data):
        self.port = free_port()
        self.proc = subprocess.Popen([sys.executable, "/app/kvserver.py", "--port", str(self.port), "--data", str(data)],
                                     stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        deadline = time.time() + 60
        while time.time() < deadline:
            if self.proc.poll() is not None:
                raise AssertionError("server exited: " + self.proc.stderr.read().decode()[-2000:])
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=1).close()
                return
            except OSError:
                time.sleep(0.1)
        raise AssertionError("server did not start")

    def req(self, method, path, body=None, headers=None, conn=None):
        c = conn or http.client.HTTPConnection("127.0.0.1", self.port, timeout=30)
        c.request(method, path, body=body, headers=headers or {})
        r = c.getresponse()
        data = r.read()
        if conn is None:
            c.close()
        return r.status, dict((k.lower(), v) for k, v in r.getheaders()), data

    def stop(self):
        self.proc.kill()
        self.proc.wait(timeout=30)


@pytest.fixture
def server(tmp_path):
    s = Server(tmp_path / "data.json")
    yield s
    s.stop()


def test_put_get_delete(server):
    rng = random.Random(5)
    val = bytes(rng.randrange(256) for _ in range(300))
    st, h, _ = server.req("PUT", "/kv/bin%20key", val)
    assert st == 201 and h["etag"] == '"1"'
    st, h, body = server.req("GET", "/kv/bin%20key")
    assert st == 200 and body == val and h["etag"] == '"1"'
    st, h, _ = server.req("PUT", "/kv/bin%20key", b"v2")
    assert st == 200 and h["etag"] == '"2"'
    assert server.req("GET", "/kv/bin%20key")[2] == b"v2"
    st, _, _ = server.req("DELETE", "/kv/bin%20key")
    assert st == 204
    st, h, body = server.req("GET", "/kv/bin%20key")
    assert st == 404 and "error" in json.loads(body)
    st, h, _ = server.req("PUT", "/kv/bin%20key", b"again")
    assert st == 201 and h["etag"] == '"1"'
    assert server.req("DELETE", "/kv/nothing")[0] == 404


def test_preconditions(server):
    server.req("PUT", "/kv/doc", b"a")
    server.req("PUT", "/kv/doc", b"b")
    assert server.req("PUT", "/kv/doc", b"c", {"If-Match": '"1"'})[0] == 412
    assert server.req("GET", "/kv/doc")[2] == b"b"
    st, h, _ = server.req("PUT", "/kv/doc", b"c", {"If-Match": '"2"'})
    assert st == 200 and h["etag"] == '"3"'
    assert server.req("PUT", "/kv/doc", b"x", {"If-None-Match": "*"})[0] == 412
    assert server.req("PUT", "/kv/fresh", b"x", {"If-None-Match": "*"})[0] == 201
    assert server.req("PUT", "/kv/ghost", b"x", {"If-Match": '"1"'})[0] == 412
    st, h, body = server.req("GET", "/kv/doc", headers={"If-None-Match": '"3"'})
    assert st == 304 and body == b""
    assert server.req("GET", "/kv/doc", headers={"If-None-Match": '"2"'})[0] == 200
    st, _, body = server.req("DELETE", "/kv/doc", headers={"If-Match": '"2"'})
    assert st == 412 and "error" in json.loads(body)
    assert server.req("DELETE", "/kv/doc", headers={"If-Match": '"3"'})[0] == 204


def test_listing_and_errors(server):
    rng = random.Random(6)
    keys = sorted({"user/%d" % rng.randint(0, 999) for _ in range(12)} | {"cfg/a", "cfg/b", "zz"})
    for k in rng.sample(keys, len(keys)):
        server.req("PUT", "/kv/" + urllib.parse.quote(k), b"1")
    st, h, body = server.req("GET", "/kv")
    assert st == 200 and h["content-type"].startswith("application/json") and json.loads(body) == keys
    assert json.loads(server.req("GET", "/kv?prefix=user/")[2]) == [k for k in keys if k.startswith("user/")]
    assert json.loads(server.req("GET", "/kv?prefix=nope")[2]) == []
    st, _, body = server.req("GET", "/elsewhere")
    assert st == 404 and "error" in json.loads(body)
    st, _, body = server.req("POST", "/kv/x", b"1")
    assert st == 405 and "error" in json.loads(body)


def test_persistence_and_concurrency(tmp_path):
    data = tmp_path / "persist.json"
    s = Server(data)
    try:
        conn = http.client.HTTPConnection("127.0.0.1", s.port, timeout=30)
        for i in range(5):  # keep-alive: one connection, several requests
            assert s.req("PUT", "/kv/k%d" % i, b"v%d" % i, conn=conn)[0] == 201
        s.req("PUT", "/kv/k0", b"v0b", conn=conn)
        conn.close()
        errors = []

        def worker(n):
            try:
                for j in range(20):
                    st = s.req("PUT", "/kv/t%d-%d" % (n, j), b"x")[0]
                    if st != 201:
                        errors.append(st)
            except Exception as e:
                errors.append(repr(e))
        ts = [threading.Thread(target=worker, args=(n,)) for n in range(8)]
        for t in ts:
            t.start()
        for t in ts:
            t.join(60)
        assert errors == []
        assert len(json.loads(s.req("GET", "/kv?prefix=t")[2])) == 160
    finally:
        s.stop()
    assert os.path.exists(data)
    s2 = Server(data)
    try:
        st, h, body = s2.req("GET", "/kv/k0")
        assert st == 200 and body == b"v0b" and h["etag"] == '"2"'
        assert len(json.loads(s2.req("GET", "/kv")[2])) == 165
    finally:
        s2.stop()
