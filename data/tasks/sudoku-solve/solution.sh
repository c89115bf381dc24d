#!/bin/bash
python3 - <<'PY'
rows = [l.strip() for l in open("/app/puzzle.txt") if l.strip()]
g = [[0 if ch == "." else int(ch) for ch in r] for r in rows]


def ok(r, c, v):
    if v in g[r] or any(g[i][c] == v for i in range(9)):
        return False
    br, bc = 3 * (r // 3), 3 * (c // 3)
    return all(g[br + i][bc + j] != v for i in range(3) for j in range(3))


def solve():
    for r in range(9):
        for c in range(9):
            if g[r][c] == 0:
                for v in range(1, 10):
                    if ok(r, c, v):
                        g[r][c] = v
                        if solve():
                            return True
                        g[r][c] = 0
                return False
    return True


assert solve()
open("/app/solution.txt", "w").write("\n".join("".join(map(str, r)) for r in g) + "\n")
PY
