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


import json
import random
import socket
import subprocess
import tempfile
import time
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path


def gen_points():
    r = random.Random(1357)
    data = {}
    t0 = 1717000000
    cpu = []
    for i in range(300):
        v = 40 + 10 * math.sin(i / 15) + r.gauss(0, 2)
        if i in (57, 140, 141, 222):
            v += r.choice([-1, 1]) * 35
        cpu.append((t0 + 15 * i + r.randint(0, 5), round(v, 3)))
    data["cpu"] = cpu
    data["disk.io"] = [(t0 + 60 * i, float(r.randint(0, 3))) for i in range(80)]
    data["flat"] = [(t0 + i, 5.0) for i in range(12)] + [(t0 + 12, 9.0), (t0 + 13, 5.0)]
    return data


def body_for(data, extra=()):
    lines = []
    for name, pts in data.items():
        for ts, v in pts:
            lines.append(json.dumps({"series": name, "ts": ts, "value": v}))
    r = random.Random(3)
    r.shuffle(lines)
    lines.extend(extra)
    return "\n".join(lines) + "\n"


BAD_LINES = [
    "{not json",
    json.dumps({"series": "cpu", "ts": "1717000000", "value": 1}),
    json.dumps({"series": "cpu", "ts": 1717000000.5, "value": 1}),
    json.dumps({"series": "", "ts": 1717000001, "value": 1}),
    json.dumps({"series": "cpu", "ts": 1717000002, "value": "3"}),
    json.dumps({"series": "cpu", "ts": 1717000003, "value": True}),
    json.dumps({"series": "cpu", "ts": 1717000004}),
    '{"series": "cpu", "ts": 1717000005, "value": NaN}',
    "[1, 2, 3]",
]


class Server:
    def __init__(self, db):
        self.db = db

    def __enter__(self):
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            self.port = s.getsockname()[1]
        self.proc = subprocess.Popen(["python3", "/app/metrics/server.py", "--port", str(self.port), "--db", str(self.db)],
                                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.time() + 30
        while time.time() < deadline:
            if self.proc.poll() is not None:
                raise AssertionError("server exited")
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=1):
                    return self
            except OSError:
                time.sleep(0.2)
        raise AssertionError("server did not start listening")

    def __exit__(self, *exc):
        self.proc.kill()
        self.proc.wait()

    def call(self, method, path, params=None, body=None):
        url = f"http://127.0.0.1:{self.port}{urllib.parse.quote(path)}"
        if params:
            url += "?" + urllib.parse.urlencode(params)
        req = urllib.request.Request(url, data=body.encode() if body is not None else None, method=method)
        try:
            with urllib.request.urlopen(req, timeout=30) as resp:
                return resp.status, json.loads(resp.read())
        except urllib.error.HTTPError as e:
            return e.code, json.loads(e.read() or b"null")


def loaded(tmp):
    """A database holding the generated data (plus one replaced point)."""
    data = gen_points()
    s = Server(Path(tmp) / "m.db").__enter__()
    try:
        status, body = s.call("POST", "/ingest", body=body_for(data, BAD_LINES))
        assert status == 200, body
        assert body == {"accepted": sum(len(p) for p in data.values()), "rejected": len(BAD_LINES)}, body
        # last write wins
        ts, _ = data["cpu"][10]
        status, body = s.call("POST", "/ingest", body=json.dumps({"series": "cpu", "ts": ts, "value": 99.5}) + "\n\n")
        assert status == 200 and body == {"accepted": 1, "rejected": 0}, body
        data["cpu"][10] = (ts, 99.5)
    except BaseException:
        s.__exit__()
        raise
    return s, data


def close(a, b):
    if a is None or b is None:
        return a is None and b is None
    return math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-9)


def test_ingest_and_series_listing():
    with tempfile.TemporaryDirectory() as tmp:
        s, data = loaded(tmp)
        with s:
            status, body = s.call("GET", "/series")
            assert status == 200
            assert body == {"series": [{"name": n, "count": len(p), "first_ts": min(t for t, _ in p), "last_ts": max(t for t, _ in p)}
                                       for n, p in sorted(data.items())]}


def test_stats_and_percentiles():
    with tempfile.TemporaryDirectory() as tmp:
        s, data = loaded(tmp)
        with s:
            pts = data["cpu"]
            lo, hi = pts[50][0], pts[199][0]
            for params, vals in (({}, [v for _, v in pts]), ({"from": lo, "to": hi}, [v for t, v in pts if lo <= t <= hi]),
                                 ({"from": lo}, [v for t, v in pts if t >= lo])):
                status, body = s.call("GET", "/series/cpu/stats", params)
                assert status == 200, body
                want = stats(vals)
                assert body["count"] == want["count"]
                for k in ("mean", "stdev", "min", "max", "p50", "p90", "p99"):
                    assert close(body[k], want[k]), (params, k, body[k], want[k])
            status, body = s.call("GET", "/series/flat/stats", {"to": 1})
            assert status == 200 and body["count"] == 0 and body["mean"] is None and body["p50"] is None


def test_resample():
    with tempfile.TemporaryDirectory() as tmp:
        s, data = loaded(tmp)
        with s:
            for name, interval, agg in (("cpu", 300, "mean"), ("cpu", 3600, "max"), ("disk.io", 600, "sum"), ("disk.io", 900, "count")):
                status, body = s.call("GET", f"/series/{name}/resample", {"interval": interval, "agg": agg})
                assert status == 200, body
                want = resample(sorted(data[name]), interval, agg)
                assert [p["ts"] for p in body["points"]] == [p["ts"] for p in want]
                assert all(close(a["value"], b["value"]) for a, b in zip(body["points"], want)), (name, interval, agg)
            status, body = s.call("GET", "/series/cpu/resample", {"interval": 60})
            assert status == 200 and len(body["points"]) == len(resample(sorted(data["cpu"]), 60, "mean"))


def test_anomalies():
    with tempfile.TemporaryDirectory() as tmp:
        s, data = loaded(tmp)
        with s:
            for name, window, z in (("cpu", 20, 3), ("cpu", 8, 2.5), ("flat", 5, 3), ("disk.io", 10, 1.5)):
                status, body = s.call("GET", f"/series/{name}/anomalies", {"window": window, "threshold": z})
                assert status == 200, body
                want = anomalies(sorted(data[name]), window, z)
                assert [a["ts"] for a in body["anomalies"]] == [a["ts"] for a in want], (name, window, z)
                for a, b in zip(body["anomalies"], want):
                    assert close(a["value"], b["value"]) and close(a["zscore"], b["zscore"]), (a, b)
            status, body = s.call("GET", "/series/cpu/anomalies")
            assert status == 200 and [a["ts"] for a in body["anomalies"]] == [a["ts"] for a in anomalies(sorted(data["cpu"]), 10, 3)]


def test_persistence_and_errors():
    with tempfile.TemporaryDirectory() as tmp:
        s, data = loaded(tmp)
        s.__exit__()
        with Server(Path(tmp) / "m.db") as s2:
            status, body = s2.call("GET", "/series")
            assert status == 200 and [x["count"] for x in body["series"]] == [len(p) for _, p in sorted(data.items())]
            status, body = s2.call("GET", "/series/cpu/stats")
            assert close(body["mean"], stats([v for _, v in data["cpu"]])["mean"])
            for path, params, code in (("/series/nope/stats", {}, 404), ("/nothing", {}, 404),
                                       ("/series/cpu/resample", {"interval": "abc"}, 400),
                                       ("/series/cpu/resample", {"interval": 60, "agg": "median"}, 400),
                                       ("/series/cpu/anomalies", {"window": 1}, 400),
                                       ("/series/cpu/anomalies", {"threshold": 0}, 400),
                                       ("/series/cpu/stats", {"from": "yesterday"}, 400)):
                status, body = s2.call("GET", path, params)
                assert status == code, (path, params, status, body)
                assert isinstance(body, dict) and "error" in body
