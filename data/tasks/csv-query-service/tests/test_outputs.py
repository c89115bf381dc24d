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


import json
import math
import random
import socket
import subprocess
import tempfile
import time
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path


def make_data():
    r = random.Random(2468)
    d = Path(tempfile.mkdtemp())
    rows = ["id,team,city,score,ratio,note"]
    for i in range(80):
        rows.append(",".join([str(i + 1), r.choice(["red", "blue", "green", ""]), r.choice(["Lyon", "Oslo", "a:b", "Kyiv"]),
                              r.choice([str(r.randint(-20, 100)), ""]), r.choice([f"{r.uniform(0, 1):.3f}", "", "1", ".5"]),
                              r.choice(["ok", "late", "n/a", "12", ""])]))
    (d / "games.csv").write_text("\n".join(rows) + "\n")
    (d / "tiny.csv").write_text("k,v\nx,1\ny,-2\nz,\n")
    (d / "notes.txt").write_text("not a dataset\n")
    return d


class Server:
    def __enter__(self):
        self.dir = make_data()
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            self.port = s.getsockname()[1]
        self.proc = subprocess.Popen(["python3", "/app/csvsvc/server.py", "--port", str(self.port), "--data", str(self.dir)],
                                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.time() + 30
        while time.time() < deadline:
            if self.proc.poll() is not None:
                raise AssertionError("server exited")
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=1):
                    break
            except OSError:
                time.sleep(0.2)
        else:
            raise AssertionError("server did not start listening")
        self.ds = {p.stem: load_csv(p.read_text()) for p in self.dir.glob("*.csv")}
        return self

    def __exit__(self, *exc):
        self.proc.kill()
        self.proc.wait()

    def call(self, method, path, params=None, body=None):
        url = f"http://127.0.0.1:{self.port}{path}"
        if params:
            url += "?" + urllib.parse.urlencode(params, doseq=True)
        req = urllib.request.Request(url, data=body.encode() if body is not None else None, method=method)
        try:
            with urllib.request.urlopen(req, timeout=20) as resp:
                return resp.status, json.loads(resp.read())
        except urllib.error.HTTPError as e:
            return e.code, json.loads(e.read() or b"null")


def approx(a, b):
    if isinstance(a, float) or isinstance(b, float):
        return isinstance(a, (int, float)) and isinstance(b, (int, float)) and math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-9)
    if isinstance(a, dict) and isinstance(b, dict):
        return sorted(a) == sorted(b) and all(approx(a[k], b[k]) for k in a)  # key order is free
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(approx(x, y) for x, y in zip(a, b))
    return a == b and type(a) is type(b)


def rows_params(p):
    return {k: v if isinstance(v, list) else [v] for k, v in p.items()}


def test_datasets_and_types():
    with Server() as s:
        status, body = s.call("GET", "/datasets")
        assert status == 200
        assert [d["name"] for d in body["datasets"]] == ["games", "tiny"]
        for d in body["datasets"]:
            assert d["rows"] == len(s.ds[d["name"]]["rows"])
            assert list(d["columns"].items()) == list(s.ds[d["name"]]["columns"].items()), d
        status, body = s.call("GET", "/datasets/tiny/rows")
        assert status == 200 and approx(body, {"total": 3, "rows": [{"k": "x", "v": 1}, {"k": "y", "v": -2}, {"k": "z", "v": None}]})


ROW_QUERIES = [
    {},
    {"where": "team:eq:red"},
    {"where": ["score:ge:10", "score:lt:60"], "order_by": "-score"},
    {"where": "city:eq:a:b", "columns": "id,city"},
    {"where": "ratio:gt:0.5", "order_by": "ratio", "limit": "5", "offset": "2"},
    {"where": "note:contains:a", "order_by": "-note", "limit": "7"},
    {"order_by": "score", "offset": "70"},
    {"where": ["team:ne:blue", "score:le:0"]},
]


def test_rows_filter_order_paging():
    with Server() as s:
        for q in ROW_QUERIES:
            status, body = s.call("GET", "/datasets/games/rows", q)
            assert status == 200, (q, body)
            want = query_rows(s.ds["games"], rows_params(q))
            assert approx(body, want), q


AGG_QUERIES = [
    {"metric": "count"},
    {"group_by": "team", "metric": ["count", "sum:score", "avg:ratio"]},
    {"group_by": "team,city", "metric": ["min:score", "max:ratio", "count"], "where": "score:gt:20"},
    {"group_by": "note", "metric": ["avg:score", "sum:ratio"]},
    {"metric": ["sum:score", "count"], "where": "team:eq:nobody"},
]


def test_aggregate():
    with Server() as s:
        for q in AGG_QUERIES:
            status, body = s.call("GET", "/datasets/games/aggregate", q)
            assert status == 200, (q, body)
            want = aggregate(s.ds["games"], rows_params(q))
            assert approx(body, want), (q, body, want)


def test_post_and_errors():
    with Server() as s:
        csv_text = "sku,qty,price\nA1,3,2.5\nB2,,4\nC3,7,\n"
        status, body = s.call("POST", "/datasets/stock", body=csv_text)
        assert status == 201 and body == {"name": "stock", "rows": 3}
        status, body = s.call("GET", "/datasets/stock/aggregate", {"metric": ["sum:qty", "avg:price", "count"]})
        assert status == 200 and approx(body, {"groups": [{"sum_qty": 10, "avg_price": 3.25, "count": 3}]})
        status, body = s.call("GET", "/datasets")
        assert [d["name"] for d in body["datasets"]] == ["games", "stock", "tiny"]
        bad = [
            ("GET", "/datasets/nope/rows", None, 404),
            ("GET", "/nothing/here", None, 404),
            ("GET", "/datasets/games/rows", {"where": "colour:eq:red"}, 400),
            ("GET", "/datasets/games/rows", {"where": "score:like:3"}, 400),
            ("GET", "/datasets/games/rows", {"where": "score:gt:abc"}, 400),
            ("GET", "/datasets/games/rows", {"limit": "ten"}, 400),
            ("GET", "/datasets/games/aggregate", {"metric": "sum:team"}, 400),
            ("GET", "/datasets/games/aggregate", {"group_by": "team"}, 400),
            ("GET", "/datasets/games/aggregate", {"metric": "median:score"}, 400),
        ]
        for method, path, params, code in bad:
            status, body = s.call(method, path, params)
            assert status == code, (path, params, status, body)
            assert isinstance(body, dict) and isinstance(body.get("error"), str), (path, params, body)
