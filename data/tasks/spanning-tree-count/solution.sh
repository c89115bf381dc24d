#!/bin/bash
set -e
cat > /app/spanning.py <<'PY'
import sys
def bareiss_det(M):
    M = [row[:] for row in M]
    n = len(M)
    if n == 0:
        return 1
    sign, prev = 1, 1
    for k in range(n - 1):
        if M[k][k] == 0:
            for i in range(k + 1, n):
                if M[i][k] != 0:
                    M[k], M[i] = M[i], M[k]
                    sign = -sign
                    break
            else:
                return 0
        for i in range(k + 1, n):
            for j in range(k + 1, n):
                M[i][j] = (M[i][j] * M[k][k] - M[i][k] * M[k][j]) // prev
        prev = M[k][k]
    return sign * M[n - 1][n - 1]


def count_trees(text):
    verts, edges = {}, []
    for line in text.splitlines():
        t = line.split("#", 1)[0].split()
        for v in t:
            verts.setdefault(v, len(verts))
        if len(t) == 2 and t[0] != t[1]:
            edges.append((verts[t[0]], verts[t[1]]))
    n = len(verts)
    if n <= 1:
        return 1
    L = [[0] * n for _ in range(n)]
    for a, b in edges:
        L[a][a] += 1
        L[b][b] += 1
        L[a][b] -= 1
        L[b][a] -= 1
    return bareiss_det([row[1:] for row in L[1:]])


if __name__ == "__main__":
    print(count_trees(open(sys.argv[1]).read()))
PY
