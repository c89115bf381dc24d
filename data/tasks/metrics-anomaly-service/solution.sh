#!/bin/bash
set -e
cat > /app/metrics/analysis.py <<'PY'
"""Statistics, resampling and anomaly detection for metricsd (see SPEC.md)."""
import math


def interp(sorted_vals, p):
    h = (len(sorted_vals) - 1) * p
    lo = math.floor(h)
    hi = min(lo + 1, len(sorted_vals) - 1)
    return sorted_vals[lo] + (h - lo) * (sorted_vals[hi] - sorted_vals[lo])


def stats(values):
    n = len(values)
    if n == 0:
        return {"count": 0, "mean": None, "stdev": None, "min": None, "max": None, "p50": None, "p90": None, "p99": None}
    s = sorted(values)
    mean = sum(values) / n
    sd = math.sqrt(sum((v - mean) ** 2 for v in values) / (n - 1)) if n > 1 else None
    return {"count": n, "mean": mean, "stdev": sd, "min": s[0], "max": s[-1],
            "p50": interp(s, 0.5), "p90": interp(s, 0.9), "p99": interp(s, 0.99)}


def resample(points, interval, agg):
    buckets = {}
    for ts, v in points:
        buckets.setdefault(ts // interval * interval, []).append(v)
    fns = {"mean": lambda xs: sum(xs) / len(xs), "sum": sum, "min": min, "max": max, "count": len}
    return [{"ts": b, "value": fns[agg](buckets[b])} for b in sorted(buckets)]


def anomalies(points, window, threshold):
    out = []
    for i in range(window, len(points)):
        prev = [v for _, v in points[i - window:i]]
        m = sum(prev) / window
        s = math.sqrt(sum((v - m) ** 2 for v in prev) / (window - 1))
        ts, v = points[i]
        if s == 0:
            if v != m:
                out.append({"ts": ts, "value": v, "zscore": None})
        elif abs((v - m) / s) > threshold:
            out.append({"ts": ts, "value": v, "zscore": (v - m) / s})
    return out
PY
cat > /app/metrics/server.py <<'PY'
"""metricsd - see SPEC.md."""
import argparse
import json
import math
import os
import sqlite3
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, unquote, urlsplit

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from analysis import anomalies, resample, stats  # noqa: E402

DB = None
LOCK = threading.Lock()


class BadRequest(Exception):
    pass


def valid_point(obj):
    if not isinstance(obj, dict):
        return None
    s, ts, v = obj.get("series"), obj.get("ts"), obj.get("value")
    if not isinstance(s, str) or not s:
        return None
    if not isinstance(ts, int) or isinstance(ts, bool):
        return None
    if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v):
        return None
    return s, ts, float(v)


def ingest(text):
    ok, bad = [], 0
    for line in text.splitlines():
        if not line.strip():
            continue
        try:
            p = valid_point(json.loads(line))
        except ValueError:
            p = None
        if p is None:
            bad += 1
        else:
            ok.append(p)
    with LOCK:
        DB.executemany("INSERT OR REPLACE INTO points(series, ts, value) VALUES (?, ?, ?)", ok)
        DB.commit()
    return {"accepted": len(ok), "rejected": bad}


def points(name, lo=None, hi=None):
    with LOCK:
        rows = DB.execute("SELECT ts, value FROM points WHERE series = ? ORDER BY ts", (name,)).fetchall()
    if not rows:
        return None
    return [(t, v) for t, v in rows if (lo is None or t >= lo) and (hi is None or t <= hi)]


def param(params, key, conv, default=None):
    if key not in params:
        return default
    try:
        return conv(params[key][-1])
    except ValueError:
        raise BadRequest(f"bad {key}")


class Handler(BaseHTTPRequestHandler):
    def send_json(self, status, obj):
        body = json.dumps(obj).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_POST(self):
        if urlsplit(self.path).path != "/ingest":
            return self.send_json(404, {"error": "not found"})
        n = int(self.headers.get("Content-Length") or 0)
        self.send_json(200, ingest(self.rfile.read(n).decode("utf-8", "replace")))

    def do_GET(self):
        url = urlsplit(self.path)
        params = parse_qs(url.query)
        parts = [unquote(p) for p in url.path.split("/") if p]
        try:
            if parts == ["series"]:
                with LOCK:
                    rows = DB.execute("SELECT series, COUNT(*), MIN(ts), MAX(ts) FROM points GROUP BY series ORDER BY series").fetchall()
                return self.send_json(200, {"series": [{"name": n, "count": c, "first_ts": a, "last_ts": b} for n, c, a, b in rows]})
            if len(parts) == 3 and parts[0] == "series" and parts[2] in ("stats", "resample", "anomalies"):
                kind = parts[2]
                if kind == "stats":
                    lo, hi = param(params, "from", int), param(params, "to", int)
                    pts = points(parts[1], lo, hi)
                    if pts is None:
                        return self.send_json(404, {"error": "unknown series"})
                    return self.send_json(200, stats([v for _, v in pts]))
                if kind == "resample":
                    interval = param(params, "interval", int)
                    agg = param(params, "agg", str, "mean")
                    if interval is None or interval <= 0 or agg not in ("mean", "sum", "min", "max", "count"):
                        raise BadRequest("bad interval or agg")
                    pts = points(parts[1])
                    if pts is None:
                        return self.send_json(404, {"error": "unknown series"})
                    return self.send_json(200, {"points": resample(pts, interval, agg)})
                window = param(params, "window", int, 10)
                z = param(params, "threshold", float, 3.0)
                if window < 2 or not z > 0 or not math.isfinite(z):
                    raise BadRequest("bad window or threshold")
                pts = points(parts[1])
                if pts is None:
                    return self.send_json(404, {"error": "unknown series"})
                return self.send_json(200, {"anomalies": anomalies(pts, window, z)})
            return self.send_json(404, {"error": "not found"})
        except BadRequest as e:
            return self.send_json(400, {"error": str(e)})

    def log_message(self, *args):
        pass


def main():
    global DB
    ap = argparse.ArgumentParser()
    ap.add_argument("--port", type=int, default=8900)
    ap.add_argument("--db", default="/app/metrics/metrics.db")
    args = ap.parse_args()
    DB = sqlite3.connect(args.db, check_same_thread=False)
    DB.execute("CREATE TABLE IF NOT EXISTS points(series TEXT NOT NULL, ts INTEGER NOT NULL, value REAL NOT NULL, PRIMARY KEY (series, ts))")
    DB.commit()
    ThreadingHTTPServer(("127.0.0.1", args.port), Handler).serve_forever()


if __name__ == "__main__":
    main()
PY
