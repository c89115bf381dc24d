import glob
import os
import subprocess

import pytest

BIN = "/app/netdiag/netdiag"


@pytest.fixture(scope="module", autouse=True)
def build():
    r = subprocess.run(["make", "-C", "/app/netdiag", "-B"], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert os.path.isfile(BIN)


def run(*args):
    for f in glob.glob("/tmp/pwn*"):
        os.remove(f)
    r = subprocess.run([BIN, *args], capture_output=True, text=True, timeout=30)
    assert not glob.glob("/tmp/pwn*"), args
    return r.returncode, r.stdout


def test_normal_behaviour():
    rc, out = run("lookup", "localhost")
    assert rc == 0 and "localhost" in out and ("127.0.0.1" in out or "::1" in out)
    assert run("lookup", "no-such-host.invalid")[0] == 1
    assert run("tail", "web", "3") == (0, "line 48 GET /page48\nline 49 GET /page49\nline 50 GET /page50\n")
    assert run("tail", "db_slow-2", "100") == (0, "".join(f"slow query {i}\n" for i in range(1, 6)))
    assert run("tail", "nolog", "5")[0] == 1
    assert run("tail", "web", "abc") == (2, "")


def test_lookup_injection_blocked():
    assert run("lookup", "localhost")[0] == 0
    for host in ["localhost; touch /tmp/pwn1", "localhost && touch /tmp/pwn2", "$(touch /tmp/pwn3)", "`touch /tmp/pwn4`",
                 "localhost|touch /tmp/pwn5", "localhost\ntouch /tmp/pwn6", "-s x", "local host", "", "a" * 254,
                 "localhost > /tmp/pwn7"]:
        rc, out = run("lookup", host)
        assert rc == 2 and out == "", repr(host)


def test_tail_injection_and_traversal_blocked():
    assert run("tail", "web", "1") == (0, "line 50 GET /page50\n")
    for name, n in [("web", "1; touch /tmp/pwn1"), ("web", "$(touch /tmp/pwn2)"), ("web; touch /tmp/pwn3 #", "1"),
                    ("../private.conf #", "5"), ("../../../etc/passwd", "5"), ("web.log /etc/passwd", "5"),
                    ("web", "0"), ("web", "1001"), ("web", "-5"), ("web", "3abc"), ("", "1"), ("w" * 65, "1"),
                    ("web", "+3"), ("web", "1 /etc/passwd")]:
        rc, out = run("tail", name, n)
        assert rc == 2 and out == "", (name, n)
        assert "SECRET" not in out and "root:" not in out
    rc, out = run("tail", "web")
    assert rc == 2 and out == ""
