import json
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).parent))
import gen_data  # noqa: E402  (the generator that built /app/data/train.csv)

FEATURES = gen_data.FEATURES


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def base():
    port = free_port()
    proc = subprocess.Popen(["python3", "/app/serve.py", "--port", str(port)], cwd="/app",
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.time() + 20
        while time.time() < deadline:
            if proc.poll() is not None:
                pytest.fail("serve.py exited: " + proc.stderr.read().decode()[-2000:])
            try:
                urllib.request.urlopen(url + "/health", timeout=2)
                break
            except (urllib.error.URLError, OSError):
                time.sleep(0.2)
        yield url
    finally:
        proc.kill()
        proc.wait()


def call(url, path, body=None, raw=None):
    data = raw if raw is not None else (json.dumps(body).encode() if body is not None else None)
    req = urllib.request.Request(url + path, data=data, method="POST" if data is not None else "GET",
                                 headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(req, timeout=30) as r:
            return r.status, r.headers.get("Content-Type", ""), json.loads(r.read())
    except urllib.error.HTTPError as e:
        return e.code, e.headers.get("Content-Type", ""), json.loads(e.read())


def instances(X):
    return [{f: (None if np.isnan(v) else float(v)) for f, v in zip(FEATURES, row)} for row in X]


def check_probs(out, n):
    assert len(out["predictions"]) == n and len(out["probabilities"]) == n
    for lab, p in zip(out["predictions"], out["probabilities"]):
        assert set(p) == {"clear", "rain", "storm"}
        assert all(0 <= v <= 1 for v in p.values()) and abs(sum(p.values()) - 1) < 1e-6
        assert p[lab] == max(p.values())


def test_health_and_metadata(base):
    code, ctype, body = call(base, "/health")
    assert code == 200 and body == {"status": "ok"} and "application/json" in ctype
    code, _, body = call(base, "/metadata")
    assert code == 200
    assert body == {"features": FEATURES, "labels": ["clear", "rain", "storm"], "n_train": 2400}
    code, _, body = call(base, "/nope")
    assert code == 404 and "error" in body


def test_heldout_accuracy(base):
    X, y = gen_data.make(1500, 2)
    code, _, out = call(base, "/predict", {"instances": instances(X)})
    assert code == 200
    check_probs(out, len(y))
    acc = np.mean([a == b for a, b in zip(out["predictions"], y)])
    assert acc >= 0.86, acc


def test_missing_values(base):
    X, y = gen_data.make(1000, 3)
    rng = np.random.default_rng(3)
    insts = instances(X)
    for inst in insts:
        f = FEATURES[rng.integers(0, 6)]
        if rng.random() < 0.5:
            del inst[f]
        else:
            inst[f] = None
        inst["station"] = "north"
    code, _, out = call(base, "/predict", {"instances": insts})
    assert code == 200
    check_probs(out, len(y))
    acc = np.mean([a == b for a, b in zip(out["predictions"], y)])
    assert acc >= 0.80, acc


def test_bad_requests(base):
    good = instances(gen_data.make(2, 4)[0])
    for raw in (b"{not json", json.dumps({"rows": good}).encode(),
                json.dumps({"instances": [dict(good[0], humidity="wet")]}).encode()):
        code, ctype, body = call(base, "/predict", raw=raw)
        assert code == 400 and isinstance(body.get("error"), str), (raw, code, body)
        assert "application/json" in ctype
    code, _, out = call(base, "/predict", {"instances": good})
    assert code == 200 and len(out["predictions"]) == 2


def test_concurrent_requests(base):
    X, y = gen_data.make(400, 5)
    chunks = [instances(X[i:i + 25]) for i in range(0, 400, 25)]
    with ThreadPoolExecutor(max_workers=8) as ex:
        results = list(ex.map(lambda c: call(base, "/predict", {"instances": c}), chunks))
    preds = []
    for code, _, out in results:
        assert code == 200
        preds += out["predictions"]
    assert len(preds) == 400
    code, _, whole = call(base, "/predict", {"instances": instances(X)})
    assert whole["predictions"] == preds
    assert np.mean([a == b for a, b in zip(preds, y)]) >= 0.84
