import contextlib
import json
import os
import shutil
import socket
import stat
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request

PASSWD = ("root:x:0:0:root:/root:/bin/bash\ndaemon:x:1:1:daemon:/usr/sbin:/usr/sbin/nologin\n"
          "kate:x:1000:1000:Kate:/home/kate:/bin/bash\nleo:x:1001:1001:Leo:/home/leo:/bin/zsh\n"
          "mia:x:1004:1004::/home/mia:/bin/sh\nshared1:x:1005:1500::/srv/s1:/bin/sh\nshared2:x:1006:1500::/srv/s2:/bin/sh\n")
GROUP = ("root:x:0:\ndaemon:x:1:\nkate:x:1000:\nleo:x:1001:\nwheel:x:10:kate\nmia:x:1004:\n"
         "dev:x:1002:leo,kate\ndocker:x:999:leo\nteam:x:1500:\nshared1:x:1500:\n")
SHADOW = "".join(f"{u}:!:19000:0:99999:7:::\n" for u in ["root", "daemon", "kate", "leo", "mia", "shared1", "shared2"])


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextlib.contextmanager
def service():
    root = tempfile.mkdtemp()
    os.makedirs(f"{root}/etc")
    os.makedirs(f"{root}/home")
    for n, t in (("passwd", PASSWD), ("group", GROUP), ("shadow", SHADOW)):
        open(f"{root}/etc/{n}", "w").write(t)
    port = free_port()
    p = subprocess.Popen([sys.executable, "/app/accountd.py", "--root", root, "--port", str(port)],
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
        yield root, port
    finally:
        p.kill()
        p.wait()
        shutil.rmtree(root, ignore_errors=True)


def call(port, method, path, body=None):
    data = None if body is None else (body if isinstance(body, bytes) else json.dumps(body).encode())
    req = urllib.request.Request(f"http://127.0.0.1:{port}{path}", data=data, method=method,
                                 headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(req, timeout=30) as r:
            raw = r.read()
            return r.status, json.loads(raw) if raw else None
    except urllib.error.HTTPError as e:
        raw = e.read()
        return e.code, json.loads(raw) if raw else None


def rows(root, n):
    return [l.split(":") for l in open(f"{root}/etc/{n}").read().splitlines() if l.strip()]


def test_read_endpoints():
    with service() as (root, port):
        code, users = call(port, "GET", "/users")
        assert code == 200
        assert [u["name"] for u in users] == ["root", "daemon", "kate", "leo", "mia", "shared1", "shared2"]
        assert call(port, "GET", "/users/leo") == (200, {"name": "leo", "uid": 1001, "gid": 1001, "home": "/home/leo",
                                                          "shell": "/bin/zsh", "groups": ["dev", "docker"]})
        assert call(port, "GET", "/users/kate")[1]["groups"] == ["dev", "wheel"]
        code, body = call(port, "GET", "/users/nobody")
        assert code == 404 and "error" in body


def test_create_user():
    with service() as (root, port):
        code, u = call(port, "POST", "/users", {"name": "nora", "groups": ["docker", "wheel"]})
        assert code == 201
        assert u == {"name": "nora", "uid": 1002, "gid": 1003, "home": "/home/nora", "shell": "/bin/bash",
                     "groups": ["docker", "wheel"]}
        assert ["nora", "x", "1002", "1003", "", "/home/nora", "/bin/bash"] in rows(root, "passwd")
        assert ["nora", "x", "1003", ""] in rows(root, "group")
        assert ["nora", "!", "19000", "0", "99999", "7", "", "", ""] in rows(root, "shadow")
        g = {r[0]: r[3] for r in rows(root, "group")}
        assert g["docker"].split(",") == ["leo", "nora"] and g["wheel"].split(",") == ["kate", "nora"]
        st = os.stat(f"{root}/home/nora")
        assert (st.st_uid, st.st_gid, stat.S_IMODE(st.st_mode)) == (1002, 1003, 0o750)
        code, u = call(port, "POST", "/users", {"name": "otto", "uid": 2000, "shell": "/bin/sh"})
        assert code == 201 and (u["uid"], u["gid"], u["shell"], u["groups"]) == (2000, 2000, "/bin/sh", [])
        code, u = call(port, "POST", "/users", {"name": "pia"})
        assert code == 201 and (u["uid"], u["gid"]) == (1003, 1005)
        assert call(port, "GET", "/users/pia")[1] == u
        assert open(f"{root}/etc/passwd").read().startswith(PASSWD)


def test_create_errors():
    with service() as (root, port):
        before = {n: open(f"{root}/etc/{n}").read() for n in ("passwd", "group", "shadow")}
        cases = [(b"{not json", 400), ({"name": "Bad Name"}, 400), ({"name": "1abc"}, 400),
                 ({"name": "zed", "groups": ["nosuchgroup"]}, 400), ({"name": "kate"}, 409), ({"name": "team"}, 409),
                 ({"name": "zed", "uid": 1004}, 409)]
        for body, want in cases:
            code, resp = call(port, "POST", "/users", body)
            assert code == want and "error" in resp, body
        assert {n: open(f"{root}/etc/{n}").read() for n in before} == before
        assert not os.path.exists(f"{root}/home/zed")


def test_delete_user():
    with service() as (root, port):
        assert call(port, "DELETE", "/users/leo")[0] == 204
        assert "leo" not in [r[0] for r in rows(root, "passwd")] + [r[0] for r in rows(root, "shadow")]
        g = {r[0]: r[3] for r in rows(root, "group")}
        assert "leo" not in g and g["dev"] == "kate" and g["docker"] == ""
        assert call(port, "DELETE", "/users/shared1")[0] == 204
        assert "shared1" in {r[0] for r in rows(root, "group")}
        assert call(port, "DELETE", "/users/leo")[0] == 404
        assert call(port, "GET", "/users/leo")[0] == 404
        assert [r[0] for r in rows(root, "passwd")] == ["root", "daemon", "kate", "mia", "shared2"]


def test_concurrent_creates():
    with service() as (root, port):
        results = []

        def worker(i):
            results.append(call(port, "POST", "/users", {"name": f"bulk{i}", "groups": ["dev"]}))
        threads = [threading.Thread(target=worker, args=(i,)) for i in range(20)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert sorted(c for c, _ in results) == [201] * 20
        uids = sorted(u["uid"] for _, u in results)
        assert len(set(uids)) == 20
        pw = rows(root, "passwd")
        assert sorted(r[0] for r in pw if r[0].startswith("bulk")) == sorted(f"bulk{i}" for i in range(20))
        assert len({r[2] for r in pw}) == len(pw)
        dev = {r[0]: r[3] for r in rows(root, "group")}["dev"].split(",")
        assert sorted(dev) == sorted(["leo", "kate"] + [f"bulk{i}" for i in range(20)])
        assert len(rows(root, "shadow")) == 27
