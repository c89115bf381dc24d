#!/bin/bash
set -e
cat > /app/webhooks/state.py <<'PY'
import json
import os
import threading


class State:
    def __init__(self, d):
        os.makedirs(d, exist_ok=True)
        self.path = os.path.join(d, "state.json")
        self.lock = threading.RLock()
        if os.path.exists(self.path):
            self.data = json.load(open(self.path))
        else:
            self.data = {"counters": {"sub": 0, "evt": 0, "dlv": 0}, "subs": {}, "events": {}, "deliveries": {}}
        for d in self.data["deliveries"].values():
            d["next_at"] = 0.0

    def next_id(self, kind):
        self.data["counters"][kind] += 1
        return "%s_%d" % (kind, self.data["counters"][kind])

    def save(self):
        tmp = self.path + ".tmp"
        with open(tmp, "w") as f:
            json.dump(self.data, f)
        os.replace(tmp, self.path)
PY
cat > /app/webhooks/hookd.py <<'PY'
"""hookd: webhook delivery service (see SPEC.md)."""
import argparse
import hashlib
import hmac
import http.client
import json
import os
import re
import sys
import threading
import time
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from state import State  # noqa: E402

CFG = {}


def num(i):
    return int(i.split("_")[1])


def matches(pattern, etype):
    if pattern == "*":
        return True
    if pattern.endswith(".*"):
        return etype.startswith(pattern[:-1])
    return pattern == etype


def attempt(st, did):
    with st.lock:
        d = st.data["deliveries"][did]
        sub = st.data["subs"][d["subscription"]]
        body = st.data["events"][d["event"]]["body"].encode()
        n = d["attempts"] + 1
    sig = hmac.new(sub["secret"].encode(), body, hashlib.sha256).hexdigest()
    u = urllib.parse.urlsplit(sub["url"])
    status = None
    try:
        c = http.client.HTTPConnection(u.hostname, u.port or 80, timeout=5)
        c.request("POST", (u.path or "/") + ("?" + u.query if u.query else ""), body=body, headers={
            "Content-Type": "application/json", "X-Hook-Event": st.data["events"][d["event"]]["type"],
            "X-Hook-Delivery": did, "X-Hook-Attempt": str(n), "X-Hook-Signature": "sha256=" + sig})
        r = c.getresponse()
        r.read()
        status = r.status
        c.close()
    except OSError:
        pass
    with st.lock:
        d = st.data["deliveries"][did]
        d["inflight"] = False
        if d["status"] != "pending":
            st.save()
            return
        d["attempts"], d["last_status"] = n, status
        if status is not None and 200 <= status < 300:
            d["status"] = "delivered"
        elif n >= CFG["max_attempts"]:
            d["status"] = "dead"
        else:
            d["next_at"] = time.time() + CFG["backoff"] * 2 ** (n - 1)
        st.save()


def scheduler(st):
    while True:
        now = time.time()
        with st.lock:
            first = {}
            for did in sorted(st.data["deliveries"], key=num):
                d = st.data["deliveries"][did]
                if d["status"] == "pending" and d["subscription"] not in first:
                    first[d["subscription"]] = did
            todo = []
            for did in first.values():
                d = st.data["deliveries"][did]
                if not d.get("inflight") and d["next_at"] <= now:
                    d["inflight"] = True
                    todo.append(did)
        for did in todo:
            threading.Thread(target=attempt, args=(st, did), daemon=True).start()
        time.sleep(0.02)


class H(BaseHTTPRequestHandler):
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

    def read_json(self):
        n = int(self.headers.get("Content-Length") or 0)
        try:
            return json.loads(self.rfile.read(n) or b"null")
        except ValueError:
            return None

    def do_POST(self):
        st = CFG["state"]
        path = urllib.parse.urlsplit(self.path).path
        body = self.read_json()
        if path == "/subscriptions":
            ok = isinstance(body, dict) and isinstance(body.get("url"), str) and body["url"].startswith("http://") \
                and isinstance(body.get("events"), list) and body["events"] and all(isinstance(e, str) and e for e in body["events"]) \
                and isinstance(body.get("secret"), str) and body["secret"]
            if not ok:
                return self.reply(400, {"error": "invalid subscription"})
            with st.lock:
                sid = st.next_id("sub")
                st.data["subs"][sid] = {"url": body["url"], "events": body["events"], "secret": body["secret"]}
                st.save()
            return self.reply(201, {"id": sid})
        if path == "/events":
            if not isinstance(body, dict) or not isinstance(body.get("type"), str) or "data" not in body:
                return self.reply(400, {"error": "invalid event"})
            with st.lock:
                eid = st.next_id("evt")
                st.data["events"][eid] = {"type": body["type"], "body": json.dumps(
                    {"id": eid, "type": body["type"], "data": body["data"]})}
                dids = []
                for sid in sorted(st.data["subs"], key=num):
                    if any(matches(p, body["type"]) for p in st.data["subs"][sid]["events"]):
                        did = st.next_id("dlv")
                        st.data["deliveries"][did] = {"event": eid, "subscription": sid, "status": "pending", "attempts": 0,
                                                      "last_status": None, "next_at": 0.0}
                        dids.append(did)
                st.save()
            return self.reply(202, {"id": eid, "deliveries": dids})
        m = re.fullmatch(r"/deliveries/(dlv_\d+)/redeliver", path)
        if m:
            with st.lock:
                d = st.data["deliveries"].get(m.group(1))
                if d is None:
                    return self.reply(404, {"error": "unknown delivery"})
                if d["status"] != "dead":
                    return self.reply(409, {"error": "not dead"})
                d.update(status="pending", attempts=0, next_at=0.0)
                st.save()
            return self.reply(200, {"id": m.group(1), "status": "pending"})
        self.reply(404, {"error": "not found"})

    def do_DELETE(self):
        st = CFG["state"]
        m = re.fullmatch(r"/subscriptions/(sub_\d+)", urllib.parse.urlsplit(self.path).path)
        if not m:
            return self.reply(404, {"error": "not found"})
        with st.lock:
            if st.data["subs"].pop(m.group(1), None) is None:
                return self.reply(404, {"error": "unknown subscription"})
            for d in st.data["deliveries"].values():
                if d["subscription"] == m.group(1) and d["status"] == "pending":
                    d["status"] = "cancelled"
            st.save()
        self.reply(204)

    def do_GET(self):
        st = CFG["state"]
        u = urllib.parse.urlsplit(self.path)
        m = re.fullmatch(r"/deliveries/(dlv_\d+)", u.path)
        if m:
            with st.lock:
                d = st.data["deliveries"].get(m.group(1))
                if d is None:
                    return self.reply(404, {"error": "unknown delivery"})
                return self.reply(200, {"id": m.group(1), "event": d["event"], "subscription": d["subscription"],
                                        "status": d["status"], "attempts": d["attempts"], "last_status": d["last_status"]})
        if u.path == "/deliveries":
            s = urllib.parse.parse_qs(u.query).get("status", [None])[0]
            with st.lock:
                ids = sorted((i for i, d in st.data["deliveries"].items() if s is None or d["status"] == s), key=num)
            return self.reply(200, {"ids": ids})
        self.reply(404, {"error": "not found"})


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--port", type=int, required=True)
    p.add_argument("--state", required=True)
    p.add_argument("--max-attempts", type=int, default=5)
    p.add_argument("--backoff", type=float, default=1.0)
    a = p.parse_args()
    st = State(a.state)
    for d in st.data["deliveries"].values():
        d["inflight"] = False
    CFG.update(state=st, max_attempts=a.max_attempts, backoff=a.backoff)
    threading.Thread(target=scheduler, args=(st,), daemon=True).start()
    ThreadingHTTPServer(("127.0.0.1", a.port), H).serve_forever()


if __name__ == "__main__":
    main()
PY
