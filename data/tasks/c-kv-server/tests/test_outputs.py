import os
import signal
import socket
import subprocess
import tempfile
import time

import pytest

# The program must be C (no wrapper around a script): it is tested where `python3` and `perl` are not available.
HIDDEN_INTERPRETERS = ["/usr/bin/python3", "/usr/bin/perl", "/usr/bin/perl5.36.0"]


@pytest.fixture(scope="module", autouse=True)
def no_interpreters():
    moved = []
    try:
        for p in HIDDEN_INTERPRETERS:
            if os.path.lexists(p):
                os.rename(p, p + ".hidden-by-tests")
                moved.append(p)
        yield
    finally:
        for p in moved:
            os.rename(p + ".hidden-by-tests", p)


_built = []


def build():
    if not _built:
        r = subprocess.run(["make", "-C", "/app/kvd"], capture_output=True, text=True, timeout=180)
        assert r.returncode == 0, r.stdout + r.stderr
        with open("/app/kvd/kvd", "rb") as f:
            assert f.read(4) == b"\x7fELF"
        _built.append(1)


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    p = s.getsockname()[1]
    s.close()
    return p


class Server:
    def __init__(self, datafile):
        build()
        self.port = free_port()
        self.proc = subprocess.Popen(["/app/kvd/kvd", str(self.port), datafile], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.time() + 20
        while time.time() < deadline:
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=1).close()
                return
            except OSError:
                assert self.proc.poll() is None, "kvd exited"
                time.sleep(0.05)
        raise AssertionError("kvd did not start listening")

    def client(self):
        return Client(self.port)

    def kill(self):
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGKILL)
        self.proc.wait(10)


class Client:
    def __init__(self, port):
        self.s = socket.create_connection(("127.0.0.1", port), timeout=10)
        self.f = self.s.makefile("rb")

    def line(self):
        return self.f.readline().decode().rstrip("\n")

    def cmd(self, text):
        self.s.sendall(text.encode() + b"\n")
        return self.line()


@pytest.fixture
def server():
    srv = Server(tempfile.mktemp(suffix=".kv"))
    yield srv
    srv.kill()


def test_basic_commands(server):
    c = server.client()
    assert c.cmd("GET missing") == "NOTFOUND"
    assert c.cmd("SET name Ada Lovelace") == "OK"
    assert c.cmd("get name") == "VALUE Ada Lovelace"
    assert c.cmd("SET empty ") == "OK"
    assert c.cmd("GET empty") == "VALUE "
    assert c.cmd("SET name  two  spaces ") == "OK"
    assert c.cmd("GET name") == "VALUE  two  spaces "
    assert c.cmd("Set Name other") == "OK"
    assert c.cmd("GET Name") == "VALUE other"
    c.s.sendall(b"DEL name\r\nDEL name\r\nGET Name\r\n")
    assert [c.line(), c.line(), c.line()] == ["DELETED", "NOTFOUND", "VALUE other"]
    assert c.cmd("QUIT") == "BYE"
    assert c.f.read() == b""


def test_incr_keys_and_errors(server):
    c = server.client()
    assert c.cmd("INCR hits") == "VALUE 1"
    assert c.cmd("INCR hits 41") == "VALUE 42"
    assert c.cmd("INCR hits -50") == "VALUE -8"
    assert c.cmd("SET word abc") == "OK"
    assert c.cmd("INCR word") == "ERR not an integer"
    assert c.cmd("GET word") == "VALUE abc"
    for k in ["user:2", "user:10", "user:1", "admin", "userx"]:
        assert c.cmd(f"SET {k} v") == "OK"
    assert c.cmd("KEYS user:") == "KEYS 3"
    assert [c.line() for _ in range(3)] == ["user:1", "user:10", "user:2"]
    assert c.cmd("KEYS") == "KEYS 7"
    assert [c.line() for _ in range(7)] == ["admin", "hits", "user:1", "user:10", "user:2", "userx", "word"]
    assert c.cmd("KEYS zzz") == "KEYS 0"
    for bad in ["FLY away", "GET", "SET onlykey", "GET a b", "INCR hits x", "SET " + "k" * 65 + " v", ""]:
        assert c.cmd(bad).startswith("ERR "), bad
    assert c.cmd("GET hits") == "VALUE -8"


def test_concurrent_clients(server):
    idle = server.client()
    idle.s.sendall(b"SET half")  # incomplete line, never finished
    clients = [server.client() for _ in range(20)]
    for i, c in enumerate(clients):
        c.s.sendall(f"INCR shared\nSET k{i} {i}\n".encode())
    for c in clients:
        assert c.line().startswith("VALUE ")
        assert c.line() == "OK"
    assert clients[0].cmd("GET shared") == "VALUE 20"
    assert clients[5].cmd("GET k17") == "VALUE 17"
    idle.s.sendall(b" way\n")
    assert idle.line() == "OK"
    assert idle.cmd("GET half") == "VALUE way"
    other = server.client()
    assert other.cmd("KEYS k1") == "KEYS 11"


def test_persistence_after_kill():
    data = tempfile.mktemp(suffix=".kv")
    srv = Server(data)
    try:
        c = srv.client()
        assert c.cmd("SET a 1") == "OK"
        assert c.cmd("SET b hello world") == "OK"
        assert c.cmd("INCR n 5") == "VALUE 5"
        assert c.cmd("SET a 2") == "OK"
        assert c.cmd("DEL b") == "DELETED"
        assert c.cmd("SET c x y") == "OK"
    finally:
        srv.kill()
    assert os.path.exists(data)
    srv = Server(data)
    try:
        c = srv.client()
        assert c.cmd("GET a") == "VALUE 2"
        assert c.cmd("GET b") == "NOTFOUND"
        assert c.cmd("INCR n") == "VALUE 6"
        assert c.cmd("GET c") == "VALUE x y"
        assert c.cmd("KEYS") == "KEYS 3"
    finally:
        srv.kill()
    srv = Server(data)
    try:
        assert srv.client().cmd("GET n") == "VALUE 6"
    finally:
        srv.kill()
