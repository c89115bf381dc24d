import contextlib
import datetime as dt
import json
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.parse
import urllib.request

sys.path.insert(0, "/tests")
import logs_ref  # noqa: E402


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextlib.contextmanager
def service(seed):
    d = tempfile.mkdtemp()
    logs_ref.generate(d, seed)
    port = free_port()
    p = subprocess.Popen([sys.executable, "/app/logsvc.py", "--logdir", d, "--port", str(port)],
                         stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        for _ in range(400):
            if p.poll() is not None:
                raise AssertionError("service exited: " + p.stderr.read().decode()[-1500:])
            with socket.socket() as s:
                if s.connect_ex(("127.0.0.1", port)) == 0:
                    break
            time.sleep(0.1)
        else:
            raise AssertionError("service did not listen")
        yield d, port
    finally:
        p.kill()
        p.wait()


def get(port, path):
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=20) as r:
            return r.status, json.loads(r.read()), r.headers.get("Content-Type", "")
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read() or b"null"), e.headers.get("Content-Type", "")


def q(**kw):
    return "?" + urllib.parse.urlencode(kw)


def test_health_and_errors():
    with service(3) as (d, port):
        code, body, ctype = get(port, "/health")
        assert (code, body) == (200, {"status": "ok"}) and ctype.startswith("application/json")
        for path in ["/nope", "/requests" + q(**{"from": "yesterday"}), "/top-clients?n=0", "/top-clients?n=x",
                     "/failed-logins"]:
            code, body, _ = get(port, path)
            assert code == (404 if path == "/nope" else 400), path
            assert isinstance(body, dict) and "error" in body, path


def test_requests_window():
    with service(4) as (d, port):
        assert get(port, "/requests")[1] == logs_ref.requests(d)
        for a, b in [("2024-03-12T09:00:00+00:00", "2024-03-12T10:30:00+00:00"),
                     ("2024-03-12T11:15:00+02:00", "2024-03-12T12:00:00+01:00"),
                     ("2024-03-12T08:00:00+00:00", "2024-03-12T08:00:00+00:00")]:
            code, body, _ = get(port, "/requests" + q(**{"from": a, "to": b}))
            exp = logs_ref.requests(d, dt.datetime.fromisoformat(a), dt.datetime.fromisoformat(b))
            assert code == 200 and body == exp, (a, b)
        a = "2024-03-12T10:00:00-01:00"
        assert get(port, "/requests" + q(**{"from": a}))[1] == logs_ref.requests(d, dt.datetime.fromisoformat(a))
        assert get(port, "/requests" + q(to=a))[1] == logs_ref.requests(d, None, dt.datetime.fromisoformat(a))


def test_top_clients():
    with service(5) as (d, port):
        assert get(port, "/top-clients")[1] == logs_ref.top_clients(d, 5)
        assert get(port, "/top-clients?n=3")[1] == logs_ref.top_clients(d, 3)
        assert get(port, "/top-clients?n=100")[1] == logs_ref.top_clients(d, 100)


def test_failed_logins():
    with service(6) as (d, port):
        for u in ["root", "admin", "alice", "nobody"]:
            code, body, _ = get(port, "/failed-logins" + q(user=u))
            assert code == 200 and body == logs_ref.failed(d, u), u


def test_sees_new_data():
    with service(7) as (d, port):
        before = get(port, "/requests")[1]
        with open(f"{d}/access.log", "a") as f:
            f.write('203.0.113.9 - - [12/Mar/2024:23:59:59 +0000] "GET / HTTP/1.1" 418 5 "-" "x"\n')
        logs_ref.write(f"{d}/access.log.9.gz", ['203.0.113.9 - - [01/Mar/2024:00:00:00 +0000] "GET / HTTP/1.1" 418 7 "-" "x"'])
        with open(f"{d}/auth.log", "a") as f:
            f.write("2024-03-12T23:00:00+00:00 host1 sshd[1]: Failed password for invalid user zed from 203.0.113.9 port 4 ssh2\n")
        after = get(port, "/requests")[1]
        assert after["total"] == before["total"] + 2 and after["by_status"]["418"] == 2
        assert after == logs_ref.requests(d)
        assert get(port, "/failed-logins" + q(user="zed"))[1] == {"user": "zed", "failed": 1, "ips": ["203.0.113.9"]}
