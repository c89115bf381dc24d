#!/bin/bash
set -e
cat > /app/jobqueue/store.py <<'PY'
import json
import sqlite3
import threading

SCHEMA = """
CREATE TABLE IF NOT EXISTS jobs (id INTEGER PRIMARY KEY AUTOINCREMENT, type TEXT, payload TEXT, priority INTEGER,
  max_attempts INTEGER, idem_key TEXT UNIQUE, body TEXT, status TEXT, attempts INTEGER DEFAULT 0, result TEXT,
  error TEXT, finished_seq INTEGER, qseq INTEGER);
CREATE TABLE IF NOT EXISTS counters (name TEXT PRIMARY KEY, value INTEGER);
INSERT OR IGNORE INTO counters VALUES ('finished', 0), ('qseq', 0);
"""


class Store:
    def __init__(self, path):
        self.db = sqlite3.connect(path, check_same_thread=False, isolation_level=None)
        self.db.row_factory = sqlite3.Row
        self.lock = threading.RLock()
        self.db.executescript(SCHEMA)
        self.db.execute("UPDATE jobs SET status='queued' WHERE status='running'")

    def _next(self, name):
        self.db.execute("UPDATE counters SET value = value + 1 WHERE name=?", (name,))
        return self.db.execute("SELECT value FROM counters WHERE name=?", (name,)).fetchone()[0]

    def add(self, body):
        with self.lock:
            key = body.get("idempotency_key")
            canon = json.dumps(body, sort_keys=True)
            if key is not None:
                r = self.db.execute("SELECT id, status, body FROM jobs WHERE idem_key=?", (key,)).fetchone()
                if r is not None:
                    return (200, {"id": r["id"], "status": r["status"]}) if r["body"] == canon else (409, {"error": "idempotency key reused"})
            self.db.execute("BEGIN")
            cur = self.db.execute(
                "INSERT INTO jobs (type, payload, priority, max_attempts, idem_key, body, status, qseq) VALUES (?,?,?,?,?,?, 'queued', ?)",
                (body["type"], json.dumps(body["payload"]), body.get("priority", 0), body.get("max_attempts", 3), key, canon,
                 self._next("qseq")))
            self.db.execute("COMMIT")
            return 202, {"id": cur.lastrowid, "status": "queued"}

    def get(self, jid):
        r = self.db.execute("SELECT * FROM jobs WHERE id=?", (jid,)).fetchone()
        if r is None:
            return None
        return {"id": r["id"], "type": r["type"], "status": r["status"], "priority": r["priority"], "attempts": r["attempts"],
                "result": json.loads(r["result"]) if r["result"] is not None else None, "error": r["error"],
                "finished_seq": r["finished_seq"]}

    def claim(self, paused):
        with self.lock:
            if paused():
                return None
            r = self.db.execute("SELECT * FROM jobs WHERE status='queued' ORDER BY priority DESC, qseq ASC LIMIT 1").fetchone()
            if r is None:
                return None
            self.db.execute("UPDATE jobs SET status='running', attempts=attempts+1 WHERE id=?", (r["id"],))
            return r["id"], r["type"], json.loads(r["payload"]), r["attempts"] + 1, r["max_attempts"]

    def finish(self, jid, ok, value, attempt, max_attempts):
        with self.lock:
            self.db.execute("BEGIN")
            if ok:
                self.db.execute("UPDATE jobs SET status='done', result=?, finished_seq=? WHERE id=?",
                                (json.dumps(value), self._next("finished"), jid))
            elif attempt >= max_attempts:
                self.db.execute("UPDATE jobs SET status='failed', error=?, finished_seq=? WHERE id=?",
                                (value, self._next("finished"), jid))
            else:
                self.db.execute("UPDATE jobs SET status='queued', error=?, qseq=? WHERE id=?", (value, self._next("qseq"), jid))
            self.db.execute("COMMIT")

    def cancel(self, jid):
        with self.lock:
            r = self.get(jid)
            if r is None:
                return 404, {"error": "no such job"}
            if r["status"] != "queued":
                return 409, {"error": "job is %s" % r["status"]}
            self.db.execute("UPDATE jobs SET status='cancelled' WHERE id=?", (jid,))
            return 200, {"id": jid, "status": "cancelled"}

    def ids(self, status=None):
        q = "SELECT id FROM jobs" + (" WHERE status=?" if status else "") + " ORDER BY id"
        return [r[0] for r in self.db.execute(q, (status,) if status else ())]

    def stats(self):
        out = {s: 0 for s in ("queued", "running", "done", "failed", "cancelled")}
        for r in self.db.execute("SELECT status, COUNT(*) FROM jobs GROUP BY status"):
            out[r[0]] = r[1]
        return out
PY
cat > /app/jobqueue/jobs.py <<'PY'
import os
import time


def is_int(v):
    return isinstance(v, int) and not isinstance(v, bool)


def validate(body):
    if not isinstance(body, dict):
        return "body must be an object"
    extra = set(body) - {"type", "payload", "priority", "max_attempts", "idempotency_key"}
    if extra:
        return "unknown members: %s" % ", ".join(sorted(extra))
    t, p = body.get("type"), body.get("payload")
    shapes = {"wordcount": ("text", str), "primes": ("limit", int), "flaky": ("fail_times", int),
              "fail": ("message", str), "wait": ("path", str)}
    if t not in shapes:
        return "unknown type"
    key, typ = shapes[t]
    if not isinstance(p, dict) or set(p) != {key}:
        return "bad payload"
    v = p[key]
    if typ is int and not (is_int(v) and v >= 0 and (t != "primes" or v <= 1000000)):
        return "bad payload"
    if typ is str and not isinstance(v, str):
        return "bad payload"
    if "priority" in body and not is_int(body["priority"]):
        return "bad priority"
    if "max_attempts" in body and not (is_int(body["max_attempts"]) and 1 <= body["max_attempts"] <= 10):
        return "bad max_attempts"
    if "idempotency_key" in body and not isinstance(body["idempotency_key"], str):
        return "bad idempotency_key"
    return None


def run(jtype, payload, attempt):
    if jtype == "wordcount":
        toks = payload["text"].split()
        return {"words": len(toks), "unique": len({t.lower() for t in toks})}
    if jtype == "primes":
        n = payload["limit"]
        if n < 2:
            return {"count": 0, "last": None}
        sieve = bytearray([1]) * (n + 1)
        sieve[0] = sieve[1] = 0
        for i in range(2, int(n ** 0.5) + 1):
            if sieve[i]:
                sieve[i * i::i] = bytearray(len(range(i * i, n + 1, i)))
        last = next(i for i in range(n, 1, -1) if sieve[i])
        return {"count": sum(sieve), "last": last}
    if jtype == "flaky":
        if attempt <= payload["fail_times"]:
            raise RuntimeError("flaky failure")
        return {"attempts": attempt}
    if jtype == "fail":
        raise RuntimeError(payload["message"])
    if jtype == "wait":
        while not os.path.exists(payload["path"]):
            time.sleep(0.05)
        return {"waited": True}
    raise RuntimeError("unknown type")
PY
cat > /app/jobqueue/server.py <<'PY'
"""jobqueue service (see SPEC.md)."""
import argparse
import json
import os
import re
import sys
import threading
import time
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import jobs  # noqa: E402
from store import Store  # noqa: E402

STATE = {"paused": False}


def worker(store):
    while True:
        job = store.claim(lambda: STATE["paused"])
        if job is None:
            time.sleep(0.02)
            continue
        jid, jtype, payload, attempt, max_attempts = job
        try:
            value, ok = jobs.run(jtype, payload, attempt), True
        except Exception as e:
            value, ok = str(e), False
        store.finish(jid, ok, value, attempt, max_attempts)


class H(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *a):
        pass

    def reply(self, status, obj):
        body = json.dumps(obj).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self):
        store = STATE["store"]
        u = urllib.parse.urlsplit(self.path)
        m = re.fullmatch(r"/jobs/(\d+)", u.path)
        if m:
            j = store.get(int(m.group(1)))
            return self.reply(200, j) if j else self.reply(404, {"error": "no such job"})
        if u.path == "/jobs":
            st = urllib.parse.parse_qs(u.query).get("status", [None])[0]
            return self.reply(200, {"ids": store.ids(st)})
        if u.path == "/stats":
            return self.reply(200, store.stats())
        if re.fullmatch(r"/jobs/\d+/cancel|/admin/(pause|resume)", u.path):
            return self.reply(405, {"error": "method not allowed"})
        self.reply(404, {"error": "not found"})

    def do_POST(self):
        store = STATE["store"]
        n = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(n) if n else b""
        path = urllib.parse.urlsplit(self.path).path
        if path == "/jobs":
            try:
                body = json.loads(raw or b"null")
            except ValueError:
                return self.reply(400, {"error": "malformed JSON"})
            err = jobs.validate(body)
            if err:
                return self.reply(400, {"error": err})
            return self.reply(*store.add(body))
        m = re.fullmatch(r"/jobs/(\d+)/cancel", path)
        if m:
            return self.reply(*store.cancel(int(m.group(1))))
        if path in ("/admin/pause", "/admin/resume"):
            with store.lock:
                STATE["paused"] = path.endswith("pause")
            return self.reply(200, {"paused": STATE["paused"]})
        if path in ("/stats",) or re.fullmatch(r"/jobs/\d+", path):
            return self.reply(405, {"error": "method not allowed"})
        self.reply(404, {"error": "not found"})


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--port", type=int, required=True)
    p.add_argument("--db", required=True)
    p.add_argument("--workers", type=int, default=2)
    a = p.parse_args()
    STATE["store"] = Store(a.db)
    for _ in range(a.workers):
        threading.Thread(target=worker, args=(STATE["store"],), daemon=True).start()
    ThreadingHTTPServer(("127.0.0.1", a.port), H).serve_forever()


if __name__ == "__main__":
    main()
PY
