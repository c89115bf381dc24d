#!/bin/bash
python3 - <<'PY'
import csv, json

pts = [(float(r["x"]), float(r["y"])) for r in csv.DictReader(open("/app/points.csv"))]
# normal equations (X^T X) beta = X^T y with columns 1, x, x^2
S = [sum(x ** k for x, _ in pts) for k in range(5)]
A = [[S[i + j] for j in range(3)] for i in range(3)]
b = [sum(y * x ** i for x, y in pts) for i in range(3)]
M = [A[i] + [b[i]] for i in range(3)]
for c in range(3):
    p = max(range(c, 3), key=lambda i: abs(M[i][c]))
    M[c], M[p] = M[p], M[c]
    for i in range(3):
        if i != c:
            f = M[i][c] / M[c][c]
            M[i] = [u - f * v for u, v in zip(M[i], M[c])]
c0, c1, c2 = (M[i][3] / M[i][i] for i in range(3))
mean = sum(y for _, y in pts) / len(pts)
sse = sum((y - (c2 * x * x + c1 * x + c0)) ** 2 for x, y in pts)
sst = sum((y - mean) ** 2 for _, y in pts)
json.dump({"a": c2, "b": c1, "c": c0, "r2": 1 - sse / sst}, open("/app/fit.json", "w"), indent=2)
PY
