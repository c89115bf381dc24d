import glob
import json
import os
import shutil
import socket
import subprocess
import time
import urllib.error
import urllib.request

import pytest


@pytest.fixture(scope="module")
def base():
    shutil.copy("/app/webapp/shop.db", "/tmp/shop_backup.db")
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    proc = subprocess.Popen(["python3", "/app/webapp/app.py", str(port)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        for _ in range(100):
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
                break
            except OSError:
                time.sleep(0.1)
        else:
            pytest.fail("server did not start")
        yield f"http://127.0.0.1:{port}"
    finally:
        proc.kill()
        proc.wait()
        shutil.copy("/tmp/shop_backup.db", "/app/webapp/shop.db")


def get(base, path, key=None):
    for f in glob.glob("/tmp/pwn*"):
        os.remove(f)
    h = {"X-Api-Key": key} if key else {}
    try:
        with urllib.request.urlopen(urllib.request.Request(base + path, headers=h), timeout=30) as r:
            st, body = r.status, r.read()
    except urllib.error.HTTPError as e:
        st, body = e.code, e.read()
    assert not glob.glob("/tmp/pwn*"), path
    return st, body


def js(b):
    return json.loads(b)


def test_normal_features(base):
    st, b = get(base, "/search?q=mug")
    assert st == 200 and js(b)["products"] == ["Blue Mug", "Mug Warmer", "Red Mug"]
    assert js(get(base, "/search?q=TEA")[1])["products"] == ["Tea Towel", "Teapot"]
    assert js(get(base, "/search?q=")[1])["products"] == ["Blue Mug", "Mug Warmer", "Red Mug", "Tea Towel", "Teapot"]
    st, b = get(base, "/invoice?id=1", "key-alice-7f3a")
    assert st == 200 and js(b) == {"id": 1, "customer": "alice", "total": 2500}
    assert js(get(base, "/invoice?id=4", "key-bob-19c2")[1])["total"] == 4500
    assert get(base, "/docs/returns.txt") == (200, b"Returns are accepted within 30 days.\n")
    assert get(base, "/docs/shipping%20info.txt") == (200, b"Shipping takes 2-5 business days.\n")
    assert get(base, "/docs/missing.txt")[0] == 404
    st, b = get(base, "/lookup?host=localhost")
    assert st == 200 and "localhost" in js(b)["output"]
    assert get(base, "/lookup?host=no-such-host.invalid")[0] == 404
    assert get(base, "/invoice?id=2", "key-alice-7f3a")[0] == 404


def test_search_injection(base):
    assert js(get(base, "/search?q=pot")[1])["products"] == ["Teapot"]
    for q in ["%27%29%20OR%201%3D1%20--%20", "zzz%27%29%20UNION%20SELECT%20secret_cost%20FROM%20products%20--%20",
              "x%27%29%20UNION%20SELECT%20api_key%20FROM%20customers%20--%20", "%27"]:
        st, b = get(base, "/search?q=" + q)
        assert st == 200, q
        prods = js(b)["products"]
        assert prods == [], (q, prods)


def test_invoice_access_control(base):
    assert js(get(base, "/invoice?id=3", "key-alice-7f3a")[1])["total"] == 120
    assert get(base, "/invoice?id=2", "key-alice-7f3a")[0] == 404
    assert get(base, "/invoice?id=4", "key-alice-7f3a")[0] == 404
    assert get(base, "/invoice?id=1", "key-bob-19c2")[0] == 404
    assert get(base, "/invoice?id=99", "key-bob-19c2")[0] == 404
    assert get(base, "/invoice?id=1")[0] == 401
    assert get(base, "/invoice?id=1", "key-alice-7f3a%27")[0] == 401


def test_docs_traversal(base):
    assert get(base, "/docs/returns.txt")[0] == 200
    for p in ["/docs/../private/admin.env", "/docs/..%2fprivate%2fadmin.env", "/docs/%2e%2e/private/admin.env",
              "/docs/%2fapp%2fwebapp%2fprivate%2fadmin.env", "/docs//app/webapp/private/admin.env",
              "/docs/..%2f..%2f..%2fetc%2fpasswd", "/docs/..", "/docs/"]:
        st, b = get(base, p)
        assert st in (400, 403, 404), p
        assert b"ADMIN_PASSWORD" not in b and b"root:x:0" not in b, p


def test_lookup_injection(base):
    assert get(base, "/lookup?host=localhost")[0] == 200
    for h in ["localhost%3Btouch%20/tmp/pwn1", "%24%28touch%20/tmp/pwn2%29", "%60touch%20/tmp/pwn3%60",
              "localhost%20%26%26%20touch%20/tmp/pwn4", "localhost%7Ctouch%20/tmp/pwn5", "-s", "local%20host",
              "a" * 254, "localhost%0Atouch%20/tmp/pwn6"]:
        assert get(base, "/lookup?host=" + h)[0] == 400, h
