import http.client
import json
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


class Server:
    def __init__(self, db):
        self.port = free_port()
        self.proc = subprocess.Popen([sys.executable, "/app/inventory_api/server.py", "--port", str(self.port), "--db", str(db)],
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

    def __call__(self, method, path, body=None, raw=None):
        c = http.client.HTTPConnection("127.0.0.1", self.port, timeout=30)
        data = raw if raw is not None else (json.dumps(body).encode() if body is not None else None)
        c.request(method, path, body=data, headers={"Content-Type": "application/json"})
        r = c.getresponse()
        payload = r.read()
        c.close()
        return r.status, (json.loads(payload) if payload else None)

    def stop(self):
        self.proc.kill()
        self.proc.wait(timeout=30)


@pytest.fixture
def srv(tmp_path):
    s = Server(tmp_path / "inv.db")
    yield s
    s.stop()


def product(i, stock=10, price=None):
    return {"sku": "SKU-%03d" % i, "name": "Product %d" % i, "price_cents": price if price is not None else 100 + i, "stock": stock}


def test_create_and_validate_products(srv):
    st, p = srv("POST", "/products", product(1))
    assert st == 201 and p == dict(product(1), id=1)
    st, p2 = srv("POST", "/products", product(2, stock=0, price=0))
    assert st == 201 and p2["id"] == 2
    assert srv("GET", "/products/2") == (200, dict(product(2, 0, 0), id=2))
    st, e = srv("GET", "/products/99")
    assert st == 404 and "error" in e
    assert srv("POST", "/products", dict(product(3), sku="SKU-001"))[0] == 409
    bad = [({"sku": "bad sku", "name": "", "price_cents": -1, "stock": 1.5}, ["name", "price_cents", "sku", "stock"]),
           ({"sku": "A", "name": "x", "price_cents": True, "stock": 1}, ["price_cents"]),
           ({"sku": "A" * 33, "name": "x", "price_cents": 1}, ["sku", "stock"]),
           ({"sku": "OK-1", "name": "x", "price_cents": 1, "stock": 1, "color": "red"}, ["color"])]
    for body, fields in bad:
        st, e = srv("POST", "/products", body)
        assert st == 400 and e["fields"] == fields and "error" in e, (body, e)
    assert srv("POST", "/products", raw=b"{nope")[0] == 400
    st, p3 = srv("POST", "/products", product(3))
    assert p3["id"] == 3


def test_listing_pagination_sorting(srv):
    rng = random.Random(8)
    prods = []
    for i in range(1, 31):
        body = {"sku": "P-%d" % i, "name": rng.choice(["anvil", "bolt", "cog", "drill"]) + str(rng.randint(0, 3)),
                "price_cents": rng.randint(1, 20) * 50, "stock": rng.randint(0, 12)}
        st, p = srv("POST", "/products", body)
        assert st == 201
        prods.append(p)
    st, page = srv("GET", "/products")
    assert st == 200 and page["total"] == 30 and page["items"] == prods[:20]
    for sort in ["name", "-price_cents", "stock", "-id", "-name"]:
        col, desc = sort.lstrip("-"), sort.startswith("-")
        want = sorted(sorted(prods, key=lambda p: p["id"]), key=lambda p: p[col], reverse=desc)
        st, page = srv("GET", "/products?sort=%s&limit=7&offset=5" % sort)
        assert st == 200 and page["items"] == want[5:12], sort
    st, page = srv("GET", "/products?min_stock=6&limit=100&sort=-stock")
    want = sorted([p for p in prods if p["stock"] >= 6], key=lambda p: (-p["stock"], p["id"]))
    assert page["total"] == len(want) and page["items"] == want
    assert srv("GET", "/products?offset=28")[1]["items"] == prods[28:]
    for q in ["limit=0", "limit=101", "offset=-1", "sort=color", "limit=abc", "sort=--id"]:
        st, e = srv("GET", "/products?" + q)
        assert st == 400 and "error" in e, q


def test_patch_delete(srv):
    srv("POST", "/products", product(1))
    srv("POST", "/products", product(2))
    st, p = srv("PATCH", "/products/1", {"name": "Renamed", "stock": 3})
    assert st == 200 and p == {"id": 1, "sku": "SKU-001", "name": "Renamed", "price_cents": 101, "stock": 3}
    st, e = srv("PATCH", "/products/1", {"sku": "NEW"})
    assert st == 400 and e["fields"] == ["sku"]
    assert srv("PATCH", "/products/1", {"stock": -2})[1]["fields"] == ["stock"]
    assert srv("PATCH", "/products/77", {"stock": 2})[0] == 404
    assert srv("GET", "/products/1")[1]["stock"] == 3
    assert srv("DELETE", "/products/2") == (204, None)
    assert srv("GET", "/products/2")[0] == 404 and srv("DELETE", "/products/2")[0] == 404
    st, p3 = srv("POST", "/products", product(3))
    assert p3["id"] == 3
    assert srv("PUT", "/products/1", {"x": 1})[0] == 405
    assert srv("GET", "/nothing")[0] == 404


def test_orders_atomic(srv):
    for i, (stock, price) in enumerate([(5, 250), (2, 1000), (10, 75)], 1):
        srv("POST", "/products", product(i, stock, price))
    st, o = srv("POST", "/orders", {"lines": [{"product_id": 1, "qty": 2}, {"product_id": 3, "qty": 4}]})
    assert st == 201 and o == {"id": 1, "lines": [{"product_id": 1, "qty": 2, "price_cents": 250},
                                                  {"product_id": 3, "qty": 4, "price_cents": 75}], "total_cents": 800}
    assert [srv("GET", "/products/%d" % i)[1]["stock"] for i in (1, 2, 3)] == [3, 2, 6]
    st, e = srv("POST", "/orders", {"lines": [{"product_id": 3, "qty": 7}, {"product_id": 1, "qty": 1}, {"product_id": 2, "qty": 3}]})
    assert st == 409 and e["product_ids"] == [2, 3]
    assert [srv("GET", "/products/%d" % i)[1]["stock"] for i in (1, 2, 3)] == [3, 2, 6]
    assert srv("POST", "/orders", {"lines": [{"product_id": 1, "qty": 1}, {"product_id": 42, "qty": 1}]})[0] == 404
    assert srv("GET", "/products/1")[1]["stock"] == 3
    for body in [{"lines": []}, {"lines": [{"product_id": 1, "qty": 0}]}, {},
                 {"lines": [{"product_id": 1, "qty": 1}, {"product_id": 1, "qty": 2}]}]:
        assert srv("POST", "/orders", body)[0] == 400, body
    srv("PATCH", "/products/1", {"price_cents": 999})
    assert srv("GET", "/orders/1")[1] == o
    assert srv("GET", "/orders/2")[0] == 404
    assert srv("DELETE", "/products/1")[0] == 409
    assert srv("GET", "/orders")[0] == 405


def test_persistence_restart(tmp_path):
    db = tmp_path / "keep.db"
    s = Server(db)
    try:
        s("POST", "/products", product(1, 4, 10))
        s("POST", "/products", product(2, 4, 10))
        s("DELETE", "/products/2")
        s("POST", "/orders", {"lines": [{"product_id": 1, "qty": 3}]})
    finally:
        s.stop()
    s = Server(db)
    try:
        assert s("GET", "/products/1")[1]["stock"] == 1
        assert s("GET", "/orders/1")[1]["total_cents"] == 30
        assert s("POST", "/products", product(5))[1]["id"] == 3
    finally:
        s.stop()
