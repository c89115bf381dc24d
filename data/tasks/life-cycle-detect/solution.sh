#!/bin/bash
python3 - <<'PY'
import json

rows = [l.strip() for l in open("/app/board.txt") if l.strip()]
H, W = len(rows), len(rows[0])
g = tuple(tuple(c == "#" for c in r) for r in rows)


def step(g):
    out = []
    for y in range(H):
        row = []
        for x in range(W):
            n = sum(g[(y + dy) % H][(x + dx) % W] for dy in (-1, 0, 1) for dx in (-1, 0, 1) if dy or dx)
            row.append(n == 3 or (g[y][x] and n == 2))
        out.append(tuple(row))
    return tuple(out)


seen, states = {g: 0}, [g]
while True:
    g = step(g)
    if g in seen:
        start, length = seen[g], len(states) - seen[g]
        break
    seen[g] = len(states)
    states.append(g)
while len(states) <= 100:
    states.append(step(states[-1]))
g100 = states[100]
open("/app/gen100.txt", "w").write("\n".join("".join("#" if c else "." for c in r) for r in g100) + "\n")
json.dump({"cycle_start": start, "cycle_length": length, "population_at_100": sum(map(sum, g100))},
          open("/app/cycle.json", "w"))
PY
