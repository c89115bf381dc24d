#!/bin/bash
set -e
mkdir -p /app/model
cat > /app/train.py <<'PY'
import csv
import json
import numpy as np

rows = list(csv.reader(open("/app/data/train.csv")))
features, data = rows[0][:-1], rows[1:]
X = np.array([[float(v) if v != "" else np.nan for v in r[:-1]] for r in data])
labels = sorted({r[-1] for r in data})
y = np.array([labels.index(r[-1]) for r in data])
mean = np.nanmean(X, axis=0)
X = np.where(np.isnan(X), mean, X)
sd = X.std(0)
Xs = (X - mean) / sd
W, b = np.zeros((X.shape[1], len(labels))), np.zeros(len(labels))
for _ in range(3000):
    Z = Xs @ W + b
    P = np.exp(Z - Z.max(1, keepdims=True))
    P /= P.sum(1, keepdims=True)
    P[np.arange(len(y)), y] -= 1
    W -= 0.5 * Xs.T @ P / len(y)
    b -= 0.5 * P.mean(0)
json.dump({"features": features, "labels": labels, "n_train": len(data), "mean": mean.tolist(), "std": sd.tolist(),
           "W": W.tolist(), "b": b.tolist()}, open("/app/model/model.json", "w"))
PY
python3 /app/train.py
cat > /app/serve.py <<'PY'
import argparse
import json
import math
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import numpy as np

M = json.load(open("/app/model/model.json"))
MEAN, STD = np.array(M["mean"]), np.array(M["std"])
W, B = np.array(M["W"]), np.array(M["b"])


class BadRequest(Exception):
    pass


def predict(instances):
    if not isinstance(instances, list):
        raise BadRequest('"instances" must be a list')
    rows = []
    for i, inst in enumerate(instances):
        if not isinstance(inst, dict):
            raise BadRequest(f"instance {i} is not an object")
        row = []
        for j, f in enumerate(M["features"]):
            v = inst.get(f)
            if v is None:
                v = MEAN[j]
            elif isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v):
                raise BadRequest(f"instance {i}: feature {f!r} must be a number or null")
            row.append(float(v))
        rows.append(row)
    if not rows:
        return {"predictions": [], "probabilities": []}
    Z = ((np.array(rows) - MEAN) / STD) @ W + B
    P = np.exp(Z - Z.max(1, keepdims=True))
    P /= P.sum(1, keepdims=True)
    return {"predictions": [M["labels"][k] for k in P.argmax(1)],
            "probabilities": [dict(zip(M["labels"], p.tolist())) for p in P]}


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def send(self, code, obj):
        body = json.dumps(obj).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self):
        if self.path == "/health":
            self.send(200, {"status": "ok"})
        elif self.path == "/metadata":
            self.send(200, {"features": M["features"], "labels": M["labels"], "n_train": M["n_train"]})
        else:
            self.send(404, {"error": f"no route {self.path}"})

    def do_POST(self):
        raw = self.rfile.read(int(self.headers.get("Content-Length", 0) or 0))
        if self.path != "/predict":
            return self.send(404, {"error": f"no route {self.path}"})
        try:
            body = json.loads(raw)
            if not isinstance(body, dict) or "instances" not in body:
                raise BadRequest('body must be an object with an "instances" list')
            self.send(200, predict(body["instances"]))
        except (ValueError, BadRequest) as e:
            self.send(400, {"error": str(e)})

    def log_message(self, *args):
        pass


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--port", type=int, required=True)
    ThreadingHTTPServer(("127.0.0.1", ap.parse_args().port), Handler).serve_forever()
PY
