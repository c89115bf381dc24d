#!/bin/bash
python3 - <<'PY'
from collections import deque
rows = [l.rstrip("\n") for l in open("/app/maze.txt") if l.strip()]
start = next((y, x) for y, r in enumerate(rows) for x, c in enumerate(r) if c == "S")
prev = {start: None}
q = deque([start])
moves = {"U": (-1, 0), "D": (1, 0), "L": (0, -1), "R": (0, 1)}
while q:
    y, x = q.popleft()
    if rows[y][x] == "E":
        break
    for m, (dy, dx) in moves.items():
        n = (y + dy, x + dx)
        if 0 <= n[0] < len(rows) and 0 <= n[1] < len(rows[n[0]]) and rows[n[0]][n[1]] != "#" and n not in prev:
            prev[n] = ((y, x), m)
            q.append(n)
out = []
cur = (y, x)
while prev[cur]:
    cur, m = prev[cur]
    out.append(m)
open("/app/path.txt", "w").write("".join(reversed(out)) + "\n")
PY
