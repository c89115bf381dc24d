import random
import socket
import subprocess
import sys
import time

import pytest


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    p = s.getsockname()[1]
    s.close()
    return p


class Chat:
    def __init__(self, history=10):
        self.port = free_port()
        self.proc = subprocess.Popen([sys.executable, "/app/chat/server.py", "--port", str(self.port), "--history", str(history)],
                                     stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, cwd="/tmp")
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

    def client(self, nick=None):
        c = Client(self.port)
        if nick:
            assert c.ask("NICK " + nick) == "OK nick " + nick
        return c

    def stop(self):
        self.proc.kill()
        self.proc.wait(timeout=30)


class Client:
    def __init__(self, port):
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=20)
        self.f = self.sock.makefile("r", encoding="utf-8", newline="\n")

    def send(self, line):
        self.sock.sendall((line + "\n").encode())

    def line(self):
        l = self.f.readline()
        assert l.endswith("\n"), "connection closed or timed out: %r" % l
        return l[:-1]

    def ask(self, line):
        self.send(line)
        return self.line()

    def nothing_pending(self):
        """The next reply must be to a marker command: proves no unexpected line was queued."""
        assert self.ask("WHO #zz-marker") == "WHO #zz-marker"

    def close(self):
        self.f.close()
        self.sock.close()


@pytest.fixture
def chat():
    c = Chat(history=3)
    yield c
    c.stop()


def test_nick_rules(chat):
    a, b = chat.client(), chat.client()
    assert a.ask("JOIN #x") == "ERR no-nick" and a.ask("MSG #x hi") == "ERR no-nick"
    assert a.ask("NICK bad nick!") == "ERR bad-nick" and a.ask("NICK " + "x" * 17) == "ERR bad-nick"
    assert a.ask("NICK Alice_1") == "OK nick Alice_1"
    assert b.ask("NICK alice_1") == "ERR nick-taken"
    assert b.ask("NICK bob") == "OK nick bob"
    assert a.ask("NICK Alice_1") == "OK nick Alice_1"
    assert b.ask("DANCE") == "ERR unknown-command"
    assert b.ask("JOIN nohash") == "ERR bad-room" and b.ask("JOIN #UPPER") == "ERR bad-room"
    assert b.ask("NICK bobby") == "OK nick bobby"
    assert a.ask("NICK bob") == "OK nick bob"


def test_rooms_and_messages(chat):
    rng = random.Random(5)
    names = ["u%d" % i for i in rng.sample(range(100), 4)]
    cs = [chat.client(n) for n in names]
    a, b, c, d = cs
    assert a.ask("JOIN #lobby") == "OK join #lobby" and a.line() == "END #lobby"
    assert b.ask("JOIN #lobby") == "OK join #lobby" and b.line() == "END #lobby"
    assert a.line() == "JOINED #lobby %s" % names[1]
    c.send("JOIN #lobby")
    assert [c.line(), c.line()] == ["OK join #lobby", "END #lobby"]
    assert a.line() == b.line() == "JOINED #lobby %s" % names[2]
    text = "hello   there: %d" % rng.randint(0, 999)
    assert b.ask("MSG #lobby " + text) == "OK msg"
    assert a.line() == c.line() == "MSG #lobby %s %s" % (names[1], text)
    b.nothing_pending()
    assert d.ask("MSG #lobby hi") == "ERR not-in-room" and d.ask("PART #lobby") == "ERR not-in-room"
    assert d.ask("WHO #lobby") == "WHO #lobby " + " ".join(sorted(names[:3]))
    assert c.ask("PART #lobby") == "OK part #lobby"
    assert a.line() == b.line() == "PARTED #lobby %s" % names[2]
    assert a.ask("JOIN #lobby") == "OK join #lobby" and a.line() == "HIST #lobby %s %s" % (names[1], text) and a.line() == "END #lobby"
    b.nothing_pending()
    c.nothing_pending()
    d.nothing_pending()
    e = chat.client("Zed")
    f = chat.client("adam")
    for x in (e, f):
        x.send("JOIN #sort")
        assert x.line() == "OK join #sort" and x.line() == "END #sort"
    assert e.line() == "JOINED #sort adam"
    assert d.ask("WHO #sort") == "WHO #sort adam Zed"
    assert d.ask("WHO #empty") == "WHO #empty"


def test_history_replay(chat):
    a, b = chat.client("ann"), chat.client("ben")
    a.send("JOIN #h")
    assert [a.line(), a.line()] == ["OK join #h", "END #h"]
    msgs = ["m%d with spaces" % i for i in range(5)]
    for m in msgs:
        assert a.ask("MSG #h " + m) == "OK msg"
    assert a.ask("NICK anna") == "OK nick anna"
    assert a.ask("MSG #h after rename") == "OK msg"
    b.send("JOIN #h")
    got = [b.line() for _ in range(5)]
    assert got == ["OK join #h", "HIST #h ann m3 with spaces", "HIST #h ann m4 with spaces", "HIST #h anna after rename", "END #h"]
    assert a.line() == "JOINED #h ben"
    b.send("JOIN #h")
    assert [b.line() for _ in range(5)][0] == "OK join #h"
    a.nothing_pending()


def test_private_quit_disconnect(chat):
    a, b, c = chat.client("a1"), chat.client("b1"), chat.client("c1")
    assert a.ask("PRIV b1 psst, secret") == "OK priv"
    assert b.line() == "PRIV a1 psst, secret"
    assert a.ask("PRIV nobody hi") == "ERR no-such-nick"
    c.nothing_pending()
    for x in (a, b, c):
        x.send("JOIN #r1")
        assert x.line() == "OK join #r1"
        assert x.line() == "END #r1"
    assert a.line() == "JOINED #r1 b1" and a.line() == "JOINED #r1 c1" and b.line() == "JOINED #r1 c1"
    for x in (a, b):
        x.send("JOIN #r2")
        assert [x.line(), x.line()] == ["OK join #r2", "END #r2"]
    assert a.line() == "JOINED #r2 b1"
    assert b.ask("QUIT") == "OK bye"
    assert b.f.readline() == ""
    got = sorted([a.line(), a.line()])
    assert got == ["PARTED #r1 b1", "PARTED #r2 b1"]
    assert c.line() == "PARTED #r1 b1"
    c.close()
    assert a.line() == "PARTED #r1 c1"
    assert a.ask("WHO #r1") == "WHO #r1 a1"
    d = chat.client("b1")
    assert d.ask("PRIV a1 back") == "OK priv" and a.line() == "PRIV b1 back"
