#!/bin/bash
set -e
cat > /app/solve.py <<'PY'
"""Solve A x = b from a system file (rows 'a1 ... an | b', '#' comments) by Gaussian
elimination with partial pivoting; print x one value per line. With --det, print det(A) instead."""
import sys


def read(path):
    A, b = [], []
    for line in open(path):
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        lhs, rhs = line.split("|")
        A.append([float(t) for t in lhs.split()])
        b.append(float(rhs))
    return A, b


def solve(A, b):
    n = len(A)
    M = [row[:] + [bb] for row, bb in zip(A, b)]
    det = 1.0
    for c in range(n):
        p = max(range(c, n), key=lambda i: abs(M[i][c]))
        if M[p][c] == 0:
            raise ValueError("matrix is singular")
        if p != c:
            M[c], M[p] = M[p], M[c]
            det = -det
        det *= M[c][c]
        for i in range(c + 1, n):
            f = M[i][c] / M[c][c]
            for j in range(c, n + 1):
                M[i][j] -= f * M[c][j]
    x = [0.0] * n
    for i in reversed(range(n)):
        x[i] = (M[i][n] - sum(M[i][j] * x[j] for j in range(i + 1, n))) / M[i][i]
    return x, det


if __name__ == "__main__":
    x, det = solve(*read(sys.argv[1]))
    if "--det" in sys.argv:
        print(repr(det))
    else:
        print("\n".join(repr(v) for v in x))
PY
python3 /app/solve.py /app/system.txt > /app/x.txt
python3 /app/solve.py /app/system.txt --det > /app/det.txt
