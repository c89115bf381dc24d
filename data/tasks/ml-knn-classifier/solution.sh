#!/bin/bash
set -e
cat > /app/knn.py <<'PY'
import csv
import sys
import numpy as np

train_path, test_path, out_path, k = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
tr = list(csv.reader(open(train_path, newline="")))
te = list(csv.reader(open(test_path, newline="")))
X = np.array([[float(v) for v in r[:-1]] for r in tr[1:]])
y = [r[-1] for r in tr[1:]]
T = np.array([[float(v) for v in r] for r in te[1:]]).reshape(-1, X.shape[1])
mu, sd = X.mean(0), X.std(0)
sd[sd == 0] = 1.0
X, T = (X - mu) / sd, (T - mu) / sd
out = []
for t in T:
    d = np.sqrt(((X - t) ** 2).sum(1))
    idx = np.argsort(d, kind="stable")[:k]
    votes, first = {}, {}
    for rank, i in enumerate(idx):
        votes[y[i]] = votes.get(y[i], 0) + 1
        first.setdefault(y[i], rank)
    best = max(votes.values())
    out.append(min((first[l], l) for l, v in votes.items() if v == best)[1])
open(out_path, "w").write("".join(l + "\n" for l in out))
PY
