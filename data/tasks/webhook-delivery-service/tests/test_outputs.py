import hashlib
import hmac
import http.client
import json
import socket
import subprocess
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    p = s.getsockname()[1]
    s.close()
    return p


class Receiver:
    """Records POSTs; answers 500 to the first `fail_first` requests (or always if fail_first < 0)."""

    def __init__(self, fail_first=0):
        self.got, self.fail_first = [], fail_first
        rec = self

        class H(BaseHTTPRequestHandler):
            def log_message(self, *a):
                pass

            def do_POST(self):
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                rec.got.append((self.path, {k.lower(): v for k, v in self.headers.items()}, body))
                fail = rec.fail_first < 0 or len(rec.got) <= rec.fail_first
                self.send_response(500 if fail else 204)
                self.send_header("Content-Length", "0")
                self.end_headers()

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), H)
        self.url = "http://127.0.0.1:%d" % self.server.server_address[1]
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self):
        self.server.shutdown()
        self.server.server_close()


class Hookd:
    def __init__(self, state, max_attempts=3, backoff=0.05):
        self.port = free_port()
        self.proc = subprocess.Popen([sys.executable, "/app/webhooks/hookd.py", "--port", str(self.port), "--state", str(state),
                                      "--max-attempts", str(max_attempts), "--backoff", str(backoff)],
                                     stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, cwd="/tmp")
        deadline = time.time() + 60
        while time.time() < deadline:
            if self.proc.poll() is not None:
                raise AssertionError("hookd exited: " + self.proc.stderr.read().decode()[-2000:])
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=1).close()
                return
            except OSError:
                time.sleep(0.1)
        raise AssertionError("hookd did not start")

    def __call__(self, method, path, body=None):
        c = http.client.HTTPConnection("127.0.0.1", self.port, timeout=30)
        c.request(method, path, body=json.dumps(body).encode() if body is not None else None, headers={"Content-Type": "application/json"})
        r = c.getresponse()
        data = r.read()
        c.close()
        return r.status, json.loads(data) if data else None

    def subscribe(self, url, events, secret):
        st, out = self("POST", "/subscriptions", {"url": url, "events": events, "secret": secret})
        assert st == 201, (st, out)
        return out["id"]

    def wait(self, did, states=("delivered", "dead", "cancelled"), limit=60):
        deadline = time.time() + limit
        while time.time() < deadline:
            d = self("GET", "/deliveries/" + did)[1]
            if d["status"] in states:
                return d
            time.sleep(0.05)
        raise AssertionError("delivery %s stuck: %s" % (did, d))

    def stop(self):
        self.proc.kill()
        self.proc.wait(timeout=30)


def check_sig(headers, body, secret):
    want = "sha256=" + hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()
    assert headers["x-hook-signature"] == want


def test_fanout_and_signature(tmp_path):
    ra, rb, rc = Receiver(), Receiver(), Receiver()
    h = Hookd(tmp_path / "s")
    try:
        a = h.subscribe(ra.url + "/hook-a", ["order.created", "user.deleted"], "sa")
        b = h.subscribe(rb.url + "/b", ["order.*"], "sb")
        c = h.subscribe(rc.url + "/c?x=1", ["*"], "sc")
        assert (a, b, c) == ("sub_1", "sub_2", "sub_3")
        assert h("POST", "/subscriptions", {"url": "ftp://x", "events": ["a"], "secret": "s"})[0] == 400
        assert h("POST", "/subscriptions", {"url": ra.url, "events": [], "secret": "s"})[0] == 400
        events = [("order.created", {"n": 1}), ("order.paid", [1, 2]), ("user.deleted", None), ("misc", "x")]
        created = []
        for t, data in events:
            st, out = h("POST", "/events", {"type": t, "data": data})
            assert st == 202
            created.append(out)
        assert [e["id"] for e in created] == ["evt_1", "evt_2", "evt_3", "evt_4"]
        assert [len(e["deliveries"]) for e in created] == [3, 2, 2, 1]
        assert created[0]["deliveries"] == ["dlv_1", "dlv_2", "dlv_3"]
        for e in created:
            for did in e["deliveries"]:
                d = h.wait(did)
                assert d["status"] == "delivered" and d["attempts"] == 1 and d["last_status"] == 204
        for rec, secret, want_types, path in [(ra, "sa", ["order.created", "user.deleted"], "/hook-a"),
                                              (rb, "sb", ["order.created", "order.paid"], "/b"),
                                              (rc, "sc", ["order.created", "order.paid", "user.deleted", "misc"], "/c?x=1")]:
            assert [json.loads(b)["type"] for _, _, b in rec.got] == want_types
            for p, hd, body in rec.got:
                assert p == path
                check_sig(hd, body, secret)
                doc = json.loads(body)
                assert hd["x-hook-event"] == doc["type"] and hd["x-hook-attempt"] == "1"
                assert doc["data"] == dict(events)[doc["type"]] and doc["id"].startswith("evt_")
                assert hd["x-hook-delivery"].startswith("dlv_")
        assert h("GET", "/deliveries?status=delivered")[1]["ids"] == ["dlv_%d" % i for i in range(1, 9)]
    finally:
        h.stop()
        for r in (ra, rb, rc):
            r.close()


def test_retries_and_dead(tmp_path):
    flaky, broken = Receiver(fail_first=2), Receiver(fail_first=-1)
    h = Hookd(tmp_path / "s", max_attempts=3)
    try:
        h.subscribe(flaky.url, ["*"], "k1")
        h.subscribe(broken.url, ["*"], "k2")
        h.subscribe("http://127.0.0.1:%d/" % free_port(), ["*"], "k3")
        _, ev = h("POST", "/events", {"type": "t", "data": {"v": 1}})
        d1, d2, d3 = (h.wait(d) for d in ev["deliveries"])
        assert d1["status"] == "delivered" and d1["attempts"] == 3 and d1["last_status"] == 204
        assert [hd["x-hook-attempt"] for _, hd, _ in flaky.got] == ["1", "2", "3"]
        assert len({b for _, _, b in flaky.got}) == 1
        check_sig(flaky.got[0][1], flaky.got[0][2], "k1")
        assert d2["status"] == "dead" and d2["attempts"] == 3 and d2["last_status"] == 500 and len(broken.got) == 3
        assert d3["status"] == "dead" and d3["attempts"] == 3 and d3["last_status"] is None
        assert h("GET", "/deliveries?status=dead")[1]["ids"] == [ev["deliveries"][1], ev["deliveries"][2]]
        assert h("POST", "/deliveries/%s/redeliver" % ev["deliveries"][0])[0] == 409
        broken.fail_first = 0
        st, out = h("POST", "/deliveries/%s/redeliver" % ev["deliveries"][1])
        assert st == 200 and out == {"id": ev["deliveries"][1], "status": "pending"}
        d2 = h.wait(ev["deliveries"][1])
        assert d2["status"] == "delivered" and d2["attempts"] == 1
        assert broken.got[-1][1]["x-hook-attempt"] == "1"
        assert h("GET", "/deliveries/dlv_99")[0] == 404
    finally:
        h.stop()
        flaky.close()
        broken.close()


def test_ordering_and_unsubscribe(tmp_path):
    r = Receiver(fail_first=2)
    h = Hookd(tmp_path / "s", max_attempts=5)
    try:
        h.subscribe(r.url, ["*"], "k")
        ids = [h("POST", "/events", {"type": "e%d" % i, "data": i})[1]["deliveries"][0] for i in range(4)]
        for d in ids:
            assert h.wait(d)["status"] == "delivered"
        assert [json.loads(b)["data"] for _, _, b in r.got] == [0, 0, 0, 1, 2, 3]
    finally:
        h.stop()
        r.close()
    slow = Receiver(fail_first=-1)
    other = Receiver()
    h = Hookd(tmp_path / "s2", max_attempts=5, backoff=60)
    try:
        s1 = h.subscribe(slow.url, ["*"], "k")
        h.subscribe(other.url, ["*"], "k")
        _, ev = h("POST", "/events", {"type": "x", "data": 1})
        h.wait(ev["deliveries"][1])
        deadline = time.time() + 30
        while h("GET", "/deliveries/" + ev["deliveries"][0])[1]["attempts"] < 1 and time.time() < deadline:
            time.sleep(0.05)
        assert h("GET", "/deliveries/" + ev["deliveries"][0])[1]["status"] == "pending"
        assert h("DELETE", "/subscriptions/" + s1)[0] == 204
        assert h("DELETE", "/subscriptions/" + s1)[0] == 404
        assert h("GET", "/deliveries/" + ev["deliveries"][0])[1]["status"] == "cancelled"
        _, ev2 = h("POST", "/events", {"type": "y", "data": 2})
        assert len(ev2["deliveries"]) == 1
        assert h.wait(ev2["deliveries"][0])["subscription"] == "sub_2"
        assert len(slow.got) == 1
    finally:
        h.stop()
        slow.close()
        other.close()


def test_restart_resumes(tmp_path):
    r = Receiver(fail_first=1)
    state = tmp_path / "persist"
    h = Hookd(state, max_attempts=4, backoff=120)
    try:
        h.subscribe(r.url, ["*"], "sec")
        _, ev = h("POST", "/events", {"type": "p", "data": {"keep": True}})
        did = ev["deliveries"][0]
        deadline = time.time() + 30
        while h("GET", "/deliveries/" + did)[1]["attempts"] < 1 and time.time() < deadline:
            time.sleep(0.05)
    finally:
        h.stop()
    h = Hookd(state, max_attempts=4, backoff=120)
    try:
        d = h.wait(did, limit=30)
        assert d["status"] == "delivered" and d["attempts"] == 2
        assert len(r.got) == 2 and r.got[0][2] == r.got[1][2]
        assert r.got[1][1]["x-hook-attempt"] == "2"
        _, ev2 = h("POST", "/events", {"type": "q", "data": 0})
        assert ev2["id"] == "evt_2" and ev2["deliveries"] == ["dlv_2"]
    finally:
        h.stop()
        r.close()
