#!/bin/bash
set -e
cat > /app/inventory_api/db.py <<'PY'
import sqlite3
import threading

SCHEMA = """
CREATE TABLE IF NOT EXISTS products (id INTEGER PRIMARY KEY AUTOINCREMENT, sku TEXT UNIQUE NOT NULL,
  name TEXT NOT NULL, price_cents INTEGER NOT NULL, stock INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS orders (id INTEGER PRIMARY KEY AUTOINCREMENT, total_cents INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS order_lines (order_id INTEGER NOT NULL, pos INTEGER NOT NULL, product_id INTEGER NOT NULL,
  qty INTEGER NOT NULL, price_cents INTEGER NOT NULL);
"""


class DB:
    def __init__(self, path):
        self.conn = sqlite3.connect(path, check_same_thread=False, isolation_level=None)
        self.conn.row_factory = sqlite3.Row
        self.lock = threading.Lock()
        self.conn.executescript(SCHEMA)
PY
cat > /app/inventory_api/logic.py <<'PY'
import re
import sqlite3

SKU = re.compile(r"[A-Z0-9-]{1,32}")
FIELDS = {"sku", "name", "price_cents", "stock"}


class ApiError(Exception):
    def __init__(self, status, msg, **extra):
        super().__init__(msg)
        self.status, self.body = status, dict({"error": msg}, **extra)


def is_int(v):
    return isinstance(v, int) and not isinstance(v, bool)


def validate(body, allowed, required):
    if not isinstance(body, dict):
        raise ApiError(400, "body must be an object", fields=[])
    bad = set(k for k in body if k not in allowed) | set(k for k in required if k not in body)
    for k, v in body.items():
        if k == "sku" and k in allowed and not (isinstance(v, str) and SKU.fullmatch(v)):
            bad.add(k)
        if k == "name" and not (isinstance(v, str) and v.strip()):
            bad.add(k)
        if k in ("price_cents", "stock") and not (is_int(v) and v >= 0):
            bad.add(k)
    if bad:
        raise ApiError(400, "validation failed", fields=sorted(bad))


def row(r):
    return {k: r[k] for k in ("id", "sku", "name", "price_cents", "stock")}


def create_product(db, body):
    validate(body, FIELDS, FIELDS)
    with db.lock:
        try:
            cur = db.conn.execute("INSERT INTO products (sku, name, price_cents, stock) VALUES (?,?,?,?)",
                                  (body["sku"], body["name"], body["price_cents"], body["stock"]))
        except sqlite3.IntegrityError:
            raise ApiError(409, "duplicate sku")
        return get_product(db, cur.lastrowid)


def get_product(db, pid):
    r = db.conn.execute("SELECT * FROM products WHERE id=?", (pid,)).fetchone()
    if r is None:
        raise ApiError(404, "no such product")
    return row(r)


def list_products(db, q):
    def num(name, default, lo, hi=None):
        v = q.get(name, [str(default)])[0]
        if not re.fullmatch(r"-?\d+", v) or int(v) < lo or (hi is not None and int(v) > hi):
            raise ApiError(400, "bad %s" % name, fields=[name])
        return int(v)
    limit, offset = num("limit", 20, 1, 100), num("offset", 0, 0)
    sort = q.get("sort", ["id"])[0]
    if not re.fullmatch(r"-?(id|name|price_cents|stock)", sort):
        raise ApiError(400, "bad sort", fields=["sort"])
    col = sort.lstrip("-")
    where, args = "", []
    if "min_stock" in q:
        where, args = "WHERE stock >= ?", [num("min_stock", 0, -10**18)]
    order = "%s %s, id ASC" % (col, "DESC" if sort.startswith("-") else "ASC")
    total = db.conn.execute("SELECT COUNT(*) FROM products " + where, args).fetchone()[0]
    rows = db.conn.execute("SELECT * FROM products %s ORDER BY %s LIMIT ? OFFSET ?" % (where, order), args + [limit, offset])
    return {"items": [row(r) for r in rows], "total": total}


def patch_product(db, pid, body):
    if isinstance(body, dict) and "sku" in body:
        raise ApiError(400, "sku cannot be changed", fields=["sku"])
    validate(body, {"name", "price_cents", "stock"}, ())
    with db.lock:
        get_product(db, pid)
        for k, v in body.items():
            db.conn.execute("UPDATE products SET %s=? WHERE id=?" % k, (v, pid))
        return get_product(db, pid)


def delete_product(db, pid):
    with db.lock:
        get_product(db, pid)
        if db.conn.execute("SELECT 1 FROM order_lines WHERE product_id=?", (pid,)).fetchone():
            raise ApiError(409, "product is referenced by orders")
        db.conn.execute("DELETE FROM products WHERE id=?", (pid,))


def create_order(db, body):
    lines = body.get("lines") if isinstance(body, dict) else None
    if set(body if isinstance(body, dict) else {}) - {"lines"} or not isinstance(lines, list) or not lines:
        raise ApiError(400, "lines required", fields=["lines"])
    seen = set()
    for ln in lines:
        if not isinstance(ln, dict) or set(ln) != {"product_id", "qty"} or not is_int(ln["product_id"]) \
                or not is_int(ln["qty"]) or ln["qty"] < 1 or ln["product_id"] in seen:
            raise ApiError(400, "bad order line", fields=["lines"])
        seen.add(ln["product_id"])
    with db.lock:
        c = db.conn
        c.execute("BEGIN IMMEDIATE")
        try:
            prods = {}
            for ln in lines:
                r = c.execute("SELECT * FROM products WHERE id=?", (ln["product_id"],)).fetchone()
                if r is None:
                    raise ApiError(404, "no such product %d" % ln["product_id"])
                prods[ln["product_id"]] = r
            short = sorted(ln["product_id"] for ln in lines if prods[ln["product_id"]]["stock"] < ln["qty"])
            if short:
                raise ApiError(409, "insufficient stock", product_ids=short)
            out = [{"product_id": ln["product_id"], "qty": ln["qty"], "price_cents": prods[ln["product_id"]]["price_cents"]}
                   for ln in lines]
            total = sum(l["qty"] * l["price_cents"] for l in out)
            oid = c.execute("INSERT INTO orders (total_cents) VALUES (?)", (total,)).lastrowid
            for i, l in enumerate(out):
                c.execute("UPDATE products SET stock = stock - ? WHERE id=?", (l["qty"], l["product_id"]))
                c.execute("INSERT INTO order_lines VALUES (?,?,?,?,?)", (oid, i, l["product_id"], l["qty"], l["price_cents"]))
            c.execute("COMMIT")
        except BaseException:
            c.execute("ROLLBACK")
            raise
    return {"id": oid, "lines": out, "total_cents": total}


def get_order(db, oid):
    o = db.conn.execute("SELECT * FROM orders WHERE id=?", (oid,)).fetchone()
    if o is None:
        raise ApiError(404, "no such order")
    lines = db.conn.execute("SELECT product_id, qty, price_cents FROM order_lines WHERE order_id=? ORDER BY pos", (oid,))
    return {"id": oid, "lines": [dict(r) for r in lines], "total_cents": o["total_cents"]}
PY
cat > /app/inventory_api/server.py <<'PY'
"""Inventory API server (see README.md)."""
import argparse
import json
import os
import re
import sys
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import logic  # noqa: E402
from db import DB  # noqa: E402

STATE = {}


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *a):
        pass

    def reply(self, status, obj=None):
        body = b"" if obj is None else json.dumps(obj).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def body(self):
        n = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(n) if n else b""
        try:
            return json.loads(raw or b"null")
        except ValueError:
            raise logic.ApiError(400, "malformed JSON")

    def route(self, method):
        u = urllib.parse.urlsplit(self.path)
        db, path = STATE["db"], u.path.rstrip("/") or "/"
        m = re.fullmatch(r"/(products|orders)(?:/(\d+))?", path)
        if not m:
            raise logic.ApiError(404, "not found")
        kind, ident = m.group(1), m.group(2)
        allowed = {("products", False): {"GET", "POST"}, ("products", True): {"GET", "PATCH", "DELETE"},
                   ("orders", False): {"POST"}, ("orders", True): {"GET"}}[(kind, ident is not None)]
        if method not in allowed:
            raise logic.ApiError(405, "method not allowed")
        if kind == "products" and ident is None:
            if method == "POST":
                return 201, logic.create_product(db, self.body())
            return 200, logic.list_products(db, urllib.parse.parse_qs(u.query, keep_blank_values=True))
        if kind == "products":
            pid = int(ident)
            if method == "GET":
                return 200, logic.get_product(db, pid)
            if method == "PATCH":
                return 200, logic.patch_product(db, pid, self.body())
            logic.delete_product(db, pid)
            return 204, None
        if ident is None:
            return 201, logic.create_order(db, self.body())
        return 200, logic.get_order(db, int(ident))

    def handle_method(self, method):
        try:
            status, obj = self.route(method)
        except logic.ApiError as e:
            status, obj = e.status, e.body
        self.reply(status, obj)

    def do_GET(self):
        self.handle_method("GET")

    def do_POST(self):
        self.handle_method("POST")

    def do_PATCH(self):
        self.handle_method("PATCH")

    def do_DELETE(self):
        self.handle_method("DELETE")

    def do_PUT(self):
        self.handle_method("PUT")


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--port", type=int, required=True)
    p.add_argument("--db", required=True)
    a = p.parse_args()
    STATE["db"] = DB(a.db)
    ThreadingHTTPServer(("127.0.0.1", a.port), Handler).serve_forever()


if __name__ == "__main__":
    main()
PY
