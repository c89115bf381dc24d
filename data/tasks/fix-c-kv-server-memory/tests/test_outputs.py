import socket
import subprocess
import time

import pytest


PROC = {}


@pytest.fixture(scope="module")
def port():
    r = subprocess.run(["make", "-C", "/app/kvd", "-B"], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    p = s.getsockname()[1]
    s.close()
    proc = subprocess.Popen(["/app/kvd/kvd", str(p)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    PROC["p"] = proc
    try:
        for _ in range(100):
            try:
                socket.create_connection(("127.0.0.1", p), timeout=0.5).close()
                break
            except OSError:
                time.sleep(0.1)
        else:
            pytest.fail("server did not start")
        yield p
    finally:
        proc.kill()
        proc.wait()


class Conn:
    def __init__(self, p):
        self.s = socket.create_connection(("127.0.0.1", p), timeout=10)
        self.buf = b""

    def cmd(self, line):
        self.s.sendall(line if isinstance(line, bytes) else line.encode() + b"\n")
        return self.readline()

    def readline(self):
        while b"\n" not in self.buf:
            chunk = self.s.recv(65536)
            if not chunk:
                raise ConnectionError("closed")
            self.buf += chunk
        line, self.buf = self.buf.split(b"\n", 1)
        return line.decode("latin-1")

    def close(self):
        self.s.close()


def alive(p, proc):
    assert proc.poll() is None, "server died"
    c = Conn(p)
    assert c.cmd("SET alive yes") == "OK"
    assert c.cmd("GET alive") == "VALUE yes"
    c.close()


def test_protocol_basics(port):
    c = Conn(port)
    assert c.cmd("SET name Ada Lovelace") == "OK"
    assert c.cmd("GET name") == "VALUE Ada Lovelace"
    assert c.cmd("SET name Grace") == "OK"
    assert c.cmd("GET name\r") == "VALUE Grace"
    assert c.cmd("SET empty ") == "OK"
    assert c.cmd("GET empty") == "VALUE "
    assert c.cmd("GET missing") == "NOTFOUND"
    assert c.cmd("DEL empty") == "OK" and c.cmd("DEL empty") == "NOTFOUND"
    n = int(c.cmd("COUNT").split()[1])
    assert c.cmd("QUIT") == "BYE"
    c.close()
    c2 = Conn(port)
    assert c2.cmd("GET name") == "VALUE Grace"
    assert c2.cmd("COUNT") == f"COUNT {n}"
    assert c2.cmd("FLY away") == "ERR"
    assert c2.cmd("GET two words") == "ERR"
    c2.close()


def test_format_string_values(port):
    c = Conn(port)
    for i, v in enumerate(["%s%s%s%s%s%s%s%s", "%x %x %x %x", "%n%n%n%n", "100% sure %d", "%99999999s"]):
        assert c.cmd(f"SET fmt{i} {v}") == "OK"
        assert c.cmd(f"GET fmt{i}") == f"VALUE {v}"
    assert c.cmd("GET %s%s%s%n") == "ERR"
    c.close()
    alive(port, PROC["p"])


def test_overflows_survived(port):
    c = Conn(port)
    assert c.cmd("SET k" + "A" * 40 + " v") == "ERR"
    assert c.cmd("GET " + "B" * 500) == "ERR"
    assert c.cmd("DEL " + "C" * 1000) == "ERR"
    assert c.cmd("SET big " + "x" * 201) == "ERR"
    assert c.cmd("SET ok " + "x" * 200) == "OK"
    assert c.cmd("GET ok") == "VALUE " + "x" * 200
    assert c.cmd("X" * 10) == "ERR"
    c.close()
    alive(port, PROC["p"])
    c = Conn(port)
    c.s.sendall(b"SET huge " + b"y" * 5000 + b"\n")
    try:
        assert c.readline() == "ERR"
        c.s.settimeout(5)
        rest = c.s.recv(100)
        assert rest == b""
    except (ConnectionError, OSError):
        pass
    c.close()
    alive(port, PROC["p"])
    c = Conn(port)
    c.s.sendall(b"GET " + b"z" * 100000)
    c.s.close()
    time.sleep(0.3)
    alive(port, PROC["p"])


def test_validation_and_limits(port):
    c = Conn(port)
    for bad in ["SET", "SET onlykey", "GET", "DEL", "SET bad/key v", "GET a b", "COUNT 5",
                "set lower case", "SET " + "k" * 33 + " v", "GET " + "k" * 33]:
        got = c.cmd(bad)
        assert got == "ERR", (bad, got)
    assert c.cmd(b"SET bin a\x01b\n") == "ERR"
    assert c.cmd(b"SET hi \xff\xfe\n") == "ERR"
    assert c.cmd("SET " + "k" * 32 + " v") == "OK"
    assert c.cmd("SET a.b-c_D9 v v v") == "OK"
    assert c.cmd("GET a.b-c_D9") == "VALUE v v v"
    base = int(c.cmd("COUNT").split()[1])
    for i in range(1000 - base):
        c.s.sendall(f"SET fill{i} x\n".encode())
    for i in range(1000 - base):
        assert c.readline() == "OK"
    assert c.cmd("COUNT") == "COUNT 1000"
    assert c.cmd("SET onemore x") == "ERR full"
    assert c.cmd("SET fill0 updated") == "OK"
    assert c.cmd("GET fill0") == "VALUE updated"
    assert c.cmd("DEL fill1") == "OK"
    assert c.cmd("SET onemore x") == "OK"
    c.close()
    alive_ok = PROC["p"].poll() is None
    assert alive_ok
