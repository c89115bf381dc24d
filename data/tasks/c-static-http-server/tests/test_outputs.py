import os
import signal
import socket
import subprocess
import tempfile
import time
from pathlib import Path

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


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    p = s.getsockname()[1]
    s.close()
    return p


@pytest.fixture(scope="module")
def server():
    if not _built:
        r = subprocess.run(["make", "-C", "/app/httpd"], capture_output=True, text=True, timeout=180)
        assert r.returncode == 0, r.stdout + r.stderr
        with open("/app/httpd/httpd", "rb") as f:
            assert f.read(4) == b"\x7fELF"
        _built.append(1)
    root = tempfile.mkdtemp()
    Path(root, "a dir/sub").mkdir(parents=True)
    Path(root, "a dir/sub/page.HTML").write_text("<p>sub</p>")
    Path(root, "a dir/index.html").write_text("<p>a dir index</p>")
    Path(root, "noindex").mkdir()
    Path(root, "data.json").write_text('{"k": 1}')
    Path(root, "main.js").write_text("console.log(1)")
    Path(root, "blob.bin").write_bytes(bytes(range(256)) * 40)
    Path(root, "plain").write_text("no extension")
    Path(root, "100%.txt").write_text("percent")
    Path(root, "..hidden.txt").write_text("dots but not a dot-dot segment")
    Path(root, "index.html").write_text("<h1>root</h1>")
    secret = Path(tempfile.mkdtemp(), "secret.txt")
    secret.write_text("top secret")
    port = free_port()
    proc = subprocess.Popen(["/app/httpd/httpd", str(port), root], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.time() + 20
    while True:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            break
        except OSError:
            assert proc.poll() is None and time.time() < deadline, "httpd did not start"
            time.sleep(0.05)
    yield port, root, secret
    proc.send_signal(signal.SIGKILL)
    proc.wait(10)


def raw(port, data: bytes):
    s = socket.create_connection(("127.0.0.1", port), timeout=10)
    s.sendall(data)
    chunks = []
    while True:
        c = s.recv(65536)
        if not c:
            break
        chunks.append(c)
    s.close()
    resp = b"".join(chunks)
    head, _, body = resp.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    status = int(lines[0].split(" ")[1])
    assert lines[0].startswith("HTTP/1.")
    headers = {}
    for l in lines[1:]:
        k, _, v = l.partition(":")
        headers[k.strip().lower()] = v.strip()
    return status, headers, body


def get(port, target, method="GET"):
    return raw(port, f"{method} {target} HTTP/1.1\r\nHost: localhost\r\n\r\n".encode())


def test_serves_files(server):
    port, root, _ = server
    st, h, b = get(port, "/data.json")
    assert (st, h["content-type"], b) == (200, "application/json", b'{"k": 1}')
    assert h["content-length"] == "8" and h["connection"].lower() == "close"
    st, h, b = get(port, "/blob.bin")
    assert st == 200 and b == bytes(range(256)) * 40 and h["content-type"] == "application/octet-stream"
    assert int(h["content-length"]) == 10240
    assert get(port, "/main.js")[1]["content-type"] == "application/javascript"
    assert get(port, "/plain")[1]["content-type"] == "application/octet-stream"
    st, h, b = get(port, "/a%20dir/sub/page.HTML?x=1&y=../..")
    assert (st, h["content-type"], b) == (200, "text/html; charset=utf-8", b"<p>sub</p>")
    assert get(port, "/100%25.txt")[2] == b"percent"
    assert get(port, "/..hidden.txt")[2] == b"dots but not a dot-dot segment"
    st, h, b = raw(port, b"GET /data.json HTTP/1.0\n\n")
    assert st == 200 and b == b'{"k": 1}'


def test_directories_and_head(server):
    port, _, _ = server
    st, h, b = get(port, "/")
    assert (st, b) == (200, b"<h1>root</h1>")
    st, h, b = get(port, "/a%20dir")
    assert st == 301 and h["location"] == "/a%20dir/"
    st, h, b = get(port, "/a%20dir/")
    assert (st, b) == (200, b"<p>a dir index</p>")
    assert get(port, "/noindex/")[0] == 404
    st, h, b = get(port, "/blob.bin", "HEAD")
    assert (st, b, h["content-length"]) == (200, b"", "10240")
    st, h, b = get(port, "/missing.txt", "HEAD")
    assert st == 404 and b == b""


def test_errors_and_traversal(server):
    port, root, secret = server
    rel = os.path.relpath(secret, root)
    for target in ["/../" + rel, "/" + rel, "/%2e%2e/" + rel, "/a%20dir/..%2F..%2F" + rel, "/%2E%2E"]:
        st, h, b = get(port, target)
        assert st in (403, 404) and b"top secret" not in b, target
    assert get(port, "/%2e%2e/" + rel)[0] == 403
    assert get(port, "/a%20dir/../index.html")[0] == 403
    assert get(port, "/nope")[0] == 404
    st, h, b = get(port, "/data.json", "POST")
    assert st == 405 and h["allow"].replace(" ", "") == "GET,HEAD"
    assert get(port, "/data.json", "DELETE")[0] == 405
    assert raw(port, b"GARBAGE\r\n\r\n")[0] == 400
    assert raw(port, b"GET /data.json\r\n\r\n")[0] == 400
    assert raw(port, b"GET /data.json HTTP/9.9\r\n\r\n")[0] == 400
    assert get(port, "/bad%zzescape")[0] == 400
    assert get(port, "/nul%00byte")[0] == 400
    assert get(port, "relative.txt")[0] == 400
    assert get(port, "/data.json")[0] == 200


def test_idle_client_does_not_block(server):
    port, _, _ = server
    idle = [socket.create_connection(("127.0.0.1", port), timeout=10) for _ in range(3)]
    idle[0].sendall(b"GET /data.js")
    try:
        for _ in range(5):
            st, _, b = get(port, "/data.json")
            assert (st, b) == (200, b'{"k": 1}')
    finally:
        for s in idle:
            s.close()
