import http.client
import json
import os
import random
import signal
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
    def __init__(self, db, workers=2):
        self.port = free_port()
        self.proc = subprocess.Popen([sys.executable, "/app/jobqueue/server.py", "--port", str(self.port), "--db", str(db),
                                      "--workers", str(workers)], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, cwd="/tmp")
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

    def __call__(self, method, path, body=None):
        c = http.client.HTTPConnection("127.0.0.1", self.port, timeout=30)
        c.request(method, path, body=json.dumps(body).encode() if body is not None else None,
                  headers={"Content-Type": "application/json"})
        r = c.getresponse()
        data = r.read()
        c.close()
        return r.status, json.loads(data) if data else None

    def submit(self, body):
        st, out = self("POST", "/jobs", body)
        assert st == 202, (st, out)
        return out["id"]

    def wait(self, jid, states=("done", "failed", "cancelled"), limit=60):
        deadline = time.time() + limit
        while time.time() < deadline:
            st, j = self("GET", "/jobs/%d" % jid)
            if j["status"] in states:
                return j
            time.sleep(0.05)
        raise AssertionError("job %d stuck in %s" % (jid, j))

    def stop(self):
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait(timeout=30)


@pytest.fixture
def srv(tmp_path):
    s = Server(tmp_path / "q.db")
    yield s
    s.stop()


def primes_ref(n):
    ps = [i for i in range(2, n + 1) if all(i % d for d in range(2, int(i ** 0.5) + 1))]
    return {"count": len(ps), "last": ps[-1] if ps else None}


def test_jobs_run_and_results(srv):
    rng = random.Random(4)
    text = " ".join(rng.choice(["Alpha", "alpha", "beta", "GAMMA", "gamma", "delta"]) for _ in range(rng.randint(5, 40)))
    toks = text.split()
    a = srv.submit({"type": "wordcount", "payload": {"text": text}})
    limits = [0, 1, 2, rng.randint(100, 5000)]
    ps = [srv.submit({"type": "primes", "payload": {"limit": n}, "priority": 3}) for n in limits]
    f = srv.submit({"type": "fail", "payload": {"message": "boom %d" % rng.randint(0, 99)}, "max_attempts": 2})
    ja = srv.wait(a)
    assert ja["status"] == "done" and ja["result"] == {"words": len(toks), "unique": len({t.lower() for t in toks})}
    assert ja["type"] == "wordcount" and ja["attempts"] == 1 and ja["error"] is None and ja["priority"] == 0
    for jid, n in zip(ps, limits):
        j = srv.wait(jid)
        assert j["result"] == primes_ref(n) and j["priority"] == 3
    jf = srv.wait(f)
    assert jf["status"] == "failed" and jf["attempts"] == 2 and jf["error"].startswith("boom") and jf["result"] is None
    seqs = sorted(srv("GET", "/jobs/%d" % i)[1]["finished_seq"] for i in [a, f] + ps)
    assert seqs == list(range(1, 7))
    assert srv("GET", "/stats")[1] == {"queued": 0, "running": 0, "done": 5, "failed": 1, "cancelled": 0}
    assert srv("GET", "/jobs?status=failed")[1] == {"ids": [f]}
    assert srv("GET", "/jobs")[1]["ids"] == list(range(1, 7))
    assert srv("GET", "/jobs/99")[0] == 404


def test_validation_and_idempotency(srv):
    bad = [{"type": "nope", "payload": {}}, {"type": "primes", "payload": {"limit": -1}},
           {"type": "primes", "payload": {"limit": 1000001}}, {"type": "primes", "payload": {"limit": "5"}},
           {"type": "wordcount", "payload": {"text": 5}}, {"type": "wordcount", "payload": {"text": "x"}, "priority": "hi"},
           {"type": "wordcount", "payload": {"text": "x"}, "max_attempts": 0}, {"type": "wordcount", "payload": {"text": "x"}, "color": 1},
           {"type": "wordcount"}]
    for b in bad:
        st, e = srv("POST", "/jobs", b)
        assert st == 400 and "error" in e, b
    body = {"type": "wordcount", "payload": {"text": "a b"}, "idempotency_key": "k-1"}
    st, first = srv("POST", "/jobs", body)
    assert st == 202
    srv.wait(first["id"])
    st, again = srv("POST", "/jobs", dict(body))
    assert st == 200 and again == {"id": first["id"], "status": "done"}
    st, e = srv("POST", "/jobs", dict(body, payload={"text": "different"}))
    assert st == 409
    assert srv("GET", "/jobs")[1]["ids"] == [first["id"]]


def test_priority_order_and_cancel(tmp_path):
    s = Server(tmp_path / "p.db", workers=1)
    try:
        assert s("POST", "/admin/pause") == (200, {"paused": True})
        rng = random.Random(9)
        prios = [rng.randint(-3, 3) for _ in range(12)]
        ids = [s.submit({"type": "wordcount", "payload": {"text": "w%d" % i}, "priority": p}) for i, p in enumerate(prios)]
        victim = ids[5]
        assert s("POST", "/jobs/%d/cancel" % victim) == (200, {"id": victim, "status": "cancelled"})
        assert s("GET", "/stats")[1]["queued"] == 11
        assert s("POST", "/admin/resume") == (200, {"paused": False})
        for i in ids:
            s.wait(i)
        got = sorted((s("GET", "/jobs/%d" % i)[1]["finished_seq"], i) for i in ids if i != victim)
        want = sorted((i for i in ids if i != victim), key=lambda i: (-prios[ids.index(i)], i))
        assert [i for _, i in got] == want
        assert s("GET", "/jobs/%d" % victim)[1]["finished_seq"] is None
        assert s("POST", "/jobs/%d/cancel" % ids[0])[0] == 409
        assert s("POST", "/jobs/999/cancel")[0] == 404
        assert s("GET", "/jobs?status=cancelled")[1] == {"ids": [victim]}
    finally:
        s.stop()


def test_retries(tmp_path):
    s = Server(tmp_path / "r.db", workers=1)
    try:
        s("POST", "/admin/pause")
        a = s.submit({"type": "flaky", "payload": {"fail_times": 1}})
        b = s.submit({"type": "wordcount", "payload": {"text": "x"}})
        c = s.submit({"type": "flaky", "payload": {"fail_times": 3}, "max_attempts": 3})
        d = s.submit({"type": "flaky", "payload": {"fail_times": 2}, "max_attempts": 5, "priority": -1})
        s("POST", "/admin/resume")
        ja, jb, jc, jd = (s.wait(x) for x in (a, b, c, d))
        assert ja["status"] == "done" and ja["result"] == {"attempts": 2} and ja["attempts"] == 2
        assert jb["finished_seq"] < ja["finished_seq"]
        assert jc["status"] == "failed" and jc["attempts"] == 3 and jc["error"] == "flaky failure"
        assert jd["status"] == "done" and jd["result"] == {"attempts": 3} and jd["finished_seq"] == 4
    finally:
        s.stop()


def test_restart_requeues(tmp_path):
    db = tmp_path / "restart.db"
    flag = tmp_path / "go.flag"
    s = Server(db, workers=1)
    try:
        w = s.submit({"type": "wait", "payload": {"path": str(flag)}, "priority": 5})
        s.wait(w, states=("running",))
        q = s.submit({"type": "primes", "payload": {"limit": 30}})
        done_before = s.submit({"type": "wordcount", "payload": {"text": "x y"}, "priority": 9})
    finally:
        s.stop()
    s = Server(db, workers=1)
    try:
        j = s("GET", "/jobs/%d" % w)[1]
        assert j["status"] in ("queued", "running") and j["attempts"] >= 1
        flag.write_text("go")
        jw = s.wait(w)
        assert jw["status"] == "done" and jw["result"] == {"waited": True} and jw["attempts"] == 2
        assert s.wait(q)["result"] == {"count": 10, "last": 29}
        assert s.wait(done_before)["status"] == "done"
        assert s("GET", "/jobs")[1]["ids"] == [w, q, done_before]
        assert sorted(s("GET", "/jobs/%d" % i)[1]["finished_seq"] for i in (w, q, done_before)) == [1, 2, 3]
    finally:
        s.stop()
