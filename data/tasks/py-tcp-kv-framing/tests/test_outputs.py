import json
import socket
import struct
import subprocess
import threading
import time

import pytest


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def server():
    port = free_port()
    proc = subprocess.Popen(["python3", "/app/kvd.py", "--port", str(port)], cwd="/tmp",
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.time() + 20
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                assert proc.poll() is None and time.time() < deadline, "kvd did not start"
                time.sleep(0.1)
        yield port
    finally:
        proc.kill()
        proc.wait()


def send_raw(sock, payload):
    sock.sendall(struct.pack(">I", len(payload)) + payload)


def recv_exact(sock, n):
    buf = b""
    while len(buf) < n:
        chunk = sock.recv(n - len(buf))
        assert chunk, "connection closed"
        buf += chunk
    return buf


def call(sock, obj=None, raw=None):
    send_raw(sock, raw if raw is not None else json.dumps(obj).encode())
    (n,) = struct.unpack(">I", recv_exact(sock, 4))
    return json.loads(recv_exact(sock, n).decode("utf-8"))


def connect(port):
    s = socket.create_connection(("127.0.0.1", port), timeout=20)
    return s


def cli(port, *args):
    r = subprocess.run(["python3", "/app/kvcli.py", "--port", str(port), *args], capture_output=True,
                       text=True, timeout=30, cwd="/tmp")
    assert r.returncode == 0, r.stderr[-1500:]
    return json.loads(r.stdout)


def test_large_and_unicode_values(server):
    with connect(server) as s:
        big = "€ü漢字✓" * 400000 + "end"
        assert call(s, {"op": "set", "key": "big", "value": big}) == {"ok": True}
        assert call(s, {"op": "get", "key": "big"}) == {"ok": True, "value": big}
        nested = {"list": list(range(100000)), "name": "Zoë"}
        assert call(s, {"op": "set", "key": "ключ", "value": nested}) == {"ok": True}
        assert call(s, {"op": "get", "key": "ключ"}) == {"ok": True, "value": nested}
    assert cli(server, "set", "café", json.dumps({"prix": "3 €"})) == {"ok": True}
    assert cli(server, "get", "café") == {"ok": True, "value": {"prix": "3 €"}}
    assert cli(server, "get", "big") == {"ok": True, "value": big}


def test_idle_client_does_not_block(server):
    idle = connect(server)
    try:
        assert call(idle, {"op": "set", "key": "a", "value": 1}) == {"ok": True}
        errors = []

        def worker(i):
            try:
                with connect(server) as s:
                    s.settimeout(10)
                    for j in range(30):
                        assert call(s, {"op": "set", "key": f"k{i}-{j}", "value": [i, j]}) == {"ok": True}
                        assert call(s, {"op": "get", "key": f"k{i}-{j}"}) == {"ok": True, "value": [i, j]}
            except Exception as e:  # noqa: BLE001
                errors.append(repr(e))
        threads = [threading.Thread(target=worker, args=(i,)) for i in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(60)
        assert not errors, errors[:3]
        assert cli(server, "get", "k7-29") == {"ok": True, "value": [7, 29]}
        assert call(idle, {"op": "get", "key": "a"}) == {"ok": True, "value": 1}
    finally:
        idle.close()


def test_errors_and_semantics(server):
    with connect(server) as s:
        assert call(s, raw=b"{not json") == {"ok": False, "error": "bad request"}
        assert call(s, {"op": "frobnicate"}) == {"ok": False, "error": "bad request"}
        assert call(s, [1, 2, 3]) == {"ok": False, "error": "bad request"}
        assert call(s, {"op": "get"}) == {"ok": False, "error": "bad request"}
        assert call(s, {"op": "get", "key": "zz"}) == {"ok": False, "error": "not found"}
        for k in ["pear", "apple", "Zed", "mango"]:
            assert call(s, {"op": "set", "key": k, "value": None}) == {"ok": True}
        assert call(s, {"op": "keys"}) == {"ok": True, "keys": ["Zed", "apple", "mango", "pear"]}
        assert call(s, {"op": "get", "key": "pear"}) == {"ok": True, "value": None}
        assert call(s, {"op": "del", "key": "pear"}) == {"ok": True, "deleted": True}
        assert call(s, {"op": "del", "key": "pear"}) == {"ok": True, "deleted": False}
        assert call(s, {"op": "keys"}) == {"ok": True, "keys": ["Zed", "apple", "mango"]}
    assert cli(server, "del", "apple") == {"ok": True, "deleted": True}
    assert cli(server, "keys") == {"ok": True, "keys": ["Zed", "mango"]}
