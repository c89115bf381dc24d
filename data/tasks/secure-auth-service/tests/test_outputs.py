import base64
import hashlib
import hmac
import json
import os
import socket
import subprocess
import time
import urllib.error
import urllib.request

import pytest

D = "/app/authsvc"


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    p = s.getsockname()[1]
    s.close()
    return p


class Server:
    def __init__(self, ttl=None):
        for f in ["users.json", "secret.key"]:
            if os.path.exists(f"{D}/{f}") and not getattr(Server, "keep", False):
                os.remove(f"{D}/{f}")
        self.port = free_port()
        env = dict(os.environ)
        if ttl is not None:
            env["TOKEN_TTL"] = str(ttl)
        self.proc = subprocess.Popen(["python3", f"{D}/server.py", str(self.port)], env=env,
                                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        for _ in range(100):
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=0.5).close()
                return
            except OSError:
                time.sleep(0.1)
        self.stop()
        pytest.fail("server did not start")

    def stop(self):
        self.proc.kill()
        self.proc.wait()

    def req(self, method, path, body=None, token=None, headers=None):
        h = dict(headers or {})
        if token is not None:
            h["Authorization"] = "Bearer " + token
        data = None
        if body is not None:
            data = body if isinstance(body, bytes) else json.dumps(body).encode()
            h["Content-Type"] = "application/json"
        r = urllib.request.Request(f"http://127.0.0.1:{self.port}{path}", data=data, method=method, headers=h)
        try:
            with urllib.request.urlopen(r, timeout=30) as resp:
                return resp.status, json.loads(resp.read() or b"{}")
        except urllib.error.HTTPError as e:
            raw = e.read()
            try:
                return e.code, json.loads(raw or b"{}")
            except ValueError:
                return e.code, {}


@pytest.fixture()
def srv():
    Server.keep = False
    s = Server()
    yield s
    s.stop()


def login(s, u, p):
    st, d = s.req("POST", "/login", {"username": u, "password": p})
    return st, d.get("token")


def test_register_and_password_storage(srv):
    assert srv.req("POST", "/register", {"username": "alice", "password": "correct horse 1"})[0] == 201
    assert srv.req("POST", "/register", {"username": "bob", "password": "correct horse 1"})[0] == 201
    assert srv.req("POST", "/register", {"username": "alice", "password": "another pass 2"})[0] == 409
    for bad in [{"username": "al", "password": "longenough1"}, {"username": "Alice", "password": "longenough1"},
                {"username": "carol", "password": "short"}, {"username": "carol"}, {"password": "longenough1"}]:
        assert srv.req("POST", "/register", bad)[0] == 400, bad
    raw = open(f"{D}/users.json").read()
    assert "correct horse 1" not in raw and "alice" in raw
    users = json.loads(raw)
    vals = json.dumps(users)
    assert "correct horse 1" not in vals
    a = json.dumps(users.get("alice"))
    b = json.dumps(users.get("bob"))
    assert a != b and hashlib.sha256(b"correct horse 1").hexdigest() not in raw and hashlib.md5(b"correct horse 1").hexdigest() not in raw
    srv.stop()
    Server.keep = True
    s2 = Server()
    try:
        assert login(s2, "alice", "correct horse 1")[0] == 200
    finally:
        s2.stop()
        Server.keep = False


def test_login_tokens_and_me(srv):
    srv.req("POST", "/register", {"username": "dave", "password": "dave-password-9"})
    st, tok = login(srv, "dave", "dave-password-9")
    assert st == 200 and tok
    assert srv.req("GET", "/me", token=tok) == (200, {"username": "dave"}) or srv.req("GET", "/me", token=tok)[1]["username"] == "dave"
    assert login(srv, "dave", "wrong-password")[0] == 401
    assert login(srv, "nobody", "whatever-pass")[0] == 401
    assert srv.req("GET", "/me")[0] == 401
    assert srv.req("GET", "/me", token=base64.b64encode(b"dave").decode())[0] == 401
    assert srv.req("GET", "/me", token=tok[:-2] + ("AA" if tok[-2:] != "AA" else "BB"))[0] == 401
    assert srv.req("GET", "/me", token="garbage.token.value")[0] == 401
    key = open(f"{D}/secret.key", "rb").read()
    assert len(key) >= 16
    assert srv.req("GET", "/nope")[0] == 404
    srv.stop()
    Server.keep = True
    s2 = Server()
    try:
        assert s2.req("GET", "/me", token=tok)[0] == 200
        assert open(f"{D}/secret.key", "rb").read() == key
    finally:
        s2.stop()
        Server.keep = False
    s3 = Server(ttl=1)
    try:
        s3.req("POST", "/register", {"username": "erin", "password": "erin-password-9"})
        st, t2 = login(s3, "erin", "erin-password-9")
        assert s3.req("GET", "/me", token=t2)[0] == 200
        time.sleep(2.5)
        assert s3.req("GET", "/me", token=t2)[0] == 401
    finally:
        s3.stop()


def test_lockout(srv):
    srv.req("POST", "/register", {"username": "frank", "password": "frank-password-1"})
    srv.req("POST", "/register", {"username": "gina", "password": "gina-password-1"})
    for i in range(4):
        assert login(srv, "frank", f"wrong-{i}")[0] == 401
    assert login(srv, "frank", "frank-password-1")[0] == 200  # success resets the counter
    for i in range(5):
        assert login(srv, "frank", f"wrong-{i}")[0] == 401
    assert login(srv, "frank", "frank-password-1")[0] == 429
    assert login(srv, "frank", "wrong")[0] == 429
    assert login(srv, "gina", "gina-password-1")[0] == 200


def test_csrf_transfer(srv):
    for u in ["hank", "ivy"]:
        srv.req("POST", "/register", {"username": u, "password": f"{u}-password-1"})
    th, ti = login(srv, "hank", "hank-password-1")[1], login(srv, "ivy", "ivy-password-1")[1]
    st, d = srv.req("GET", "/csrf", token=th)
    assert st == 200
    n1 = d["csrf"]
    body = {"to": "ivy", "amount": 25}
    assert srv.req("POST", "/transfer", body, token=th)[0] == 403
    assert srv.req("POST", "/transfer", body, token=th, headers={"X-CSRF-Token": "made-up"})[0] == 403
    assert srv.req("POST", "/transfer", body, token=ti, headers={"X-CSRF-Token": n1})[0] == 403
    assert srv.req("POST", "/transfer", body, headers={"X-CSRF-Token": n1})[0] == 401
    st, d = srv.req("POST", "/transfer", body, token=th, headers={"X-CSRF-Token": n1})
    assert (st, d.get("ok")) == (200, True)
    assert srv.req("POST", "/transfer", body, token=th, headers={"X-CSRF-Token": n1})[0] == 403
    n2 = srv.req("GET", "/csrf", token=th)[1]["csrf"]
    n3 = srv.req("GET", "/csrf", token=th)[1]["csrf"]
    assert n2 != n3 and n2 != n1
    assert srv.req("POST", "/transfer", {"to": "ivy", "amount": -5}, token=th, headers={"X-CSRF-Token": n2})[0] == 400
    assert srv.req("POST", "/transfer", {"to": "ivy", "amount": 7}, token=th, headers={"X-CSRF-Token": n3})[0] == 200
    assert srv.req("GET", "/csrf")[0] == 401
