import http.client
import socket
import subprocess
import time

import pytest

SECRETS = [b"TOP-SECRET", b"BACKUP-SECRET", b"root:x:0:0"]


@pytest.fixture(scope="module")
def port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    p = s.getsockname()[1]
    s.close()
    proc = subprocess.Popen(["python3", "/app/fileserver.py", str(p)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
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


def get(port, path):
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    c.putrequest("GET", path, skip_accept_encoding=True)
    c.endheaders()
    r = c.getresponse()
    body = r.read()
    c.close()
    return r.status, body


def blocked(port, path):
    st, body = get(port, path)
    assert st in (400, 403, 404), (path, st)
    for s in SECRETS:
        assert s not in body, path


def test_normal_files_served(port):
    assert get(port, "/files/index.txt") == (200, b"welcome to the docs\n")
    assert get(port, "/files/docs/2024/q1%20report.txt") == (200, b"Q1 report: revenue up\n")
    assert get(port, "/download?name=docs/2024/q1+report.txt") == (200, b"Q1 report: revenue up\n")
    assert get(port, "/download?name=docs%2F2024%2Fq1%20report.txt") == (200, b"Q1 report: revenue up\n")
    assert get(port, "/files/docs/notes..v2.txt") == (200, b"notes..v2\n")
    assert get(port, "/files/img/logo.bin") == (200, bytes(range(256)) * 4)
    assert get(port, "/files/docs/home.txt") == (200, b"welcome to the docs\n")
    assert get(port, "/files/docs/../index.txt")[0] in (200, 400, 403, 404)
    assert get(port, "/files/missing.txt")[0] == 404
    blocked(port, "/download?name=../secret.txt")


def test_dotdot_attacks_blocked(port):
    assert get(port, "/files/index.txt")[0] == 200
    for p in ["/files/../secret.txt", "/files/..%2fsecret.txt", "/files/%2e%2e/secret.txt", "/files/%2e%2e%2fsecret.txt",
              "/files/docs/../../secret.txt", "/files/docs/%2e%2e/%2e%2e/secret.txt", "/files/../../../../etc/passwd",
              "/download?name=../secret.txt", "/download?name=..%2F..%2Fetc%2Fpasswd", "/download?name=/etc/passwd",
              "/download?name=/app/secret.txt", "/files//etc/passwd", "/files/%2fetc%2fpasswd",
              "/download?name=docs/2024/../../../secret.txt", "/files/....//secret.txt"]:
        blocked(port, p)


def test_symlink_and_odd_paths_blocked(port):
    assert get(port, "/download?name=index.txt") == (200, b"welcome to the docs\n")
    for p in ["/files/docs/secret-link.txt", "/files/img/backup/keys.txt", "/download?name=img/backup/keys.txt",
              "/files/..%5csecret.txt", "/download?name=..\\secret.txt", "/files/index.txt%00.png",
              "/download?name=../secret.txt%00", "/files/docs", "/files/", "/download?name=", "/download",
              "/files/%252e%252e/secret.txt"]:
        blocked(port, p)
