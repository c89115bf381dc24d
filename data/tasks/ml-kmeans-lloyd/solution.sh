#!/bin/bash
set -e
cat > /app/kmeans.py <<'PY'
import json
import sys
import numpy as np

X = np.loadtxt(sys.argv[1], delimiter=",", ndmin=2)
k = int(sys.argv[2])
C = X[:k].copy()
labels = None
for _ in range(300):
    d = ((X[:, None, :] - C[None, :, :]) ** 2).sum(-1)
    new = d.argmin(1)
    if labels is not None and (new == labels).all():
        break
    labels = new
    for j in range(k):
        if (labels == j).any():
            C[j] = X[labels == j].mean(0)
inertia = float(((X - C[labels]) ** 2).sum())
json.dump({"labels": labels.tolist(), "centroids": C.tolist(), "inertia": inertia}, open(sys.argv[3], "w"))
PY
