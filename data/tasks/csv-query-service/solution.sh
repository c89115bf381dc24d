#!/bin/bash
set -e
cat > /app/csvsvc/core.py <<'PY'
"""Dataset loading, filtering, ordering and aggregation for csvsvc (see API.md)."""
import csv
import io
import re

INT = re.compile(r"-?[0-9]+")
FLOAT = re.compile(r"-?[0-9]*\.?[0-9]+")
OPS = {"eq": lambda a, b: a == b, "ne": lambda a, b: a != b, "lt": lambda a, b: a < b,
       "le": lambda a, b: a <= b, "gt": lambda a, b: a > b, "ge": lambda a, b: a >= b}


class BadRequest(Exception):
    pass


def load_csv(text):
    reader = csv.reader(io.StringIO(text))
    try:
        header = next(reader)
    except StopIteration:
        raise BadRequest("empty csv")
    if not header or any(not h for h in header) or len(set(header)) != len(header):
        raise BadRequest("bad header")
    raw = [row for row in reader if row]
    for row in raw:
        if len(row) != len(header):
            raise BadRequest("row length differs from header")
    types = {}
    for i, h in enumerate(header):
        vals = [row[i] for row in raw if row[i] != ""]
        if vals and all(INT.fullmatch(v) for v in vals):
            types[h] = "int"
        elif vals and all(FLOAT.fullmatch(v) for v in vals):
            types[h] = "float"
        else:
            types[h] = "str"
    conv = {"int": int, "float": float, "str": str}
    rows = [{h: (None if row[i] == "" else conv[types[h]](row[i])) for i, h in enumerate(header)} for row in raw]
    return {"columns": types, "rows": rows}


def convert(ds, col, value):
    t = ds["columns"][col]
    if t == "int":
        if not INT.fullmatch(value):
            raise BadRequest(f"{value!r} is not an int")
        return int(value)
    if t == "float":
        if not FLOAT.fullmatch(value):
            raise BadRequest(f"{value!r} is not a number")
        return float(value)
    return value


def text_of(v):
    return str(v)


def filter_rows(ds, wheres):
    conds = []
    for w in wheres:
        parts = w.split(":", 2)
        if len(parts) != 3:
            raise BadRequest("where must be COL:OP:VALUE")
        col, op, value = parts
        if col not in ds["columns"]:
            raise BadRequest(f"unknown column {col}")
        if op == "contains":
            conds.append((col, lambda a, v=value: v in text_of(a)))
        elif op in OPS:
            b = convert(ds, col, value)
            conds.append((col, lambda a, b=b, f=OPS[op]: f(a, b)))
        else:
            raise BadRequest(f"unknown operator {op}")
    return [r for r in ds["rows"] if all(r[c] is not None and f(r[c]) for c, f in conds)]


def query_rows(ds, params):
    rows = filter_rows(ds, params.get("where", []))
    total = len(rows)
    if "order_by" in params:
        ob = params["order_by"][-1]
        desc = ob.startswith("-")
        col = ob[1:] if desc else ob
        if col not in ds["columns"]:
            raise BadRequest(f"unknown column {col}")
        present = [r for r in rows if r[col] is not None]
        nulls = [r for r in rows if r[col] is None]
        present.sort(key=lambda r: r[col], reverse=desc)  # sort is stable, also with reverse=True
        rows = present + nulls
    try:
        offset = int(params.get("offset", ["0"])[-1])
        limit = int(params["limit"][-1]) if "limit" in params else None
    except ValueError:
        raise BadRequest("bad limit/offset")
    if offset < 0 or (limit is not None and limit < 0):
        raise BadRequest("bad limit/offset")
    rows = rows[offset:] if limit is None else rows[offset:offset + limit]
    if "columns" in params:
        cols = params["columns"][-1].split(",")
        for c in cols:
            if c not in ds["columns"]:
                raise BadRequest(f"unknown column {c}")
        rows = [{c: r[c] for c in cols} for r in rows]
    return {"total": total, "rows": rows}


def aggregate(ds, params):
    rows = filter_rows(ds, params.get("where", []))
    gb = params["group_by"][-1].split(",") if "group_by" in params else []
    for c in gb:
        if c not in ds["columns"]:
            raise BadRequest(f"unknown column {c}")
    metrics = params.get("metric", [])
    if not metrics:
        raise BadRequest("at least one metric")
    specs = []
    for m in metrics:
        if m == "count":
            specs.append(("count", None))
            continue
        fn, _, col = m.partition(":")
        if fn not in ("sum", "avg", "min", "max") or not col:
            raise BadRequest(f"unknown metric {m}")
        if col not in ds["columns"]:
            raise BadRequest(f"unknown column {col}")
        if ds["columns"][col] == "str":
            raise BadRequest(f"{fn} needs a numeric column")
        specs.append((fn, col))
    groups = {}
    for r in rows:
        groups.setdefault(tuple(r[c] for c in gb), []).append(r)
    if not gb and not groups:
        groups[()] = []
    out = []
    for key in sorted(groups, key=lambda k: tuple((v is None, v if v is not None else 0) for v in k)):
        g = dict(zip(gb, key))
        members = groups[key]
        for fn, col in specs:
            if fn == "count":
                g["count"] = len(members)
                continue
            vals = [r[col] for r in members if r[col] is not None]
            name = f"{fn}_{col}"
            if not vals:
                g[name] = None
            elif fn == "sum":
                g[name] = sum(vals)
            elif fn == "avg":
                g[name] = sum(vals) / len(vals)
            elif fn == "min":
                g[name] = min(vals)
            else:
                g[name] = max(vals)
        out.append(g)
    return {"groups": out}
PY
cat > /app/csvsvc/server.py <<'PY'
"""csvsvc server - see API.md."""
import argparse
import json
import os
import re
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from core import BadRequest, aggregate, load_csv, query_rows  # noqa: E402

DATASETS = {}


class Handler(BaseHTTPRequestHandler):
    def send_json(self, status, obj):
        body = json.dumps(obj).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def route(self, method):
        url = urlsplit(self.path)
        params = parse_qs(url.query, keep_blank_values=True)
        parts = [p for p in url.path.split("/") if p]
        try:
            if method == "GET" and parts == ["health"]:
                return self.send_json(200, {"ok": True})
            if method == "GET" and parts == ["datasets"]:
                return self.send_json(200, {"datasets": [
                    {"name": n, "rows": len(d["rows"]), "columns": d["columns"]} for n, d in sorted(DATASETS.items())]})
            if method == "POST" and len(parts) == 2 and parts[0] == "datasets":
                if not re.fullmatch(r"[A-Za-z0-9_-]+", parts[1]):
                    raise BadRequest("bad dataset name")
                n = int(self.headers.get("Content-Length") or 0)
                try:
                    text = self.rfile.read(n).decode("utf-8")
                except UnicodeDecodeError:
                    raise BadRequest("body is not utf-8")
                DATASETS[parts[1]] = load_csv(text)
                return self.send_json(201, {"name": parts[1], "rows": len(DATASETS[parts[1]]["rows"])})
            if method == "GET" and len(parts) == 3 and parts[0] == "datasets" and parts[2] in ("rows", "aggregate"):
                ds = DATASETS.get(parts[1])
                if ds is None:
                    return self.send_json(404, {"error": f"unknown dataset {parts[1]}"})
                fn = query_rows if parts[2] == "rows" else aggregate
                return self.send_json(200, fn(ds, params))
            return self.send_json(404, {"error": "not found"})
        except BadRequest as e:
            return self.send_json(400, {"error": str(e)})

    def do_GET(self):
        self.route("GET")

    def do_POST(self):
        self.route("POST")

    def log_message(self, *args):
        pass


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--port", type=int, default=8765)
    ap.add_argument("--data", default="/app/data")
    args = ap.parse_args()
    for name in sorted(os.listdir(args.data)):
        if name.endswith(".csv"):
            with open(os.path.join(args.data, name), newline="") as f:
                DATASETS[name[:-4]] = load_csv(f.read())
    ThreadingHTTPServer(("127.0.0.1", args.port), Handler).serve_forever()


if __name__ == "__main__":
    main()
PY
