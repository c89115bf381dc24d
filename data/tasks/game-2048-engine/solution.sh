#!/bin/bash
set -e
cat > /app/engine2048.py <<'PY'
import sys


def slide(line):
    tiles = [v for v in line if v]
    out, score, i = [], 0, 0
    while i < len(tiles):
        if i + 1 < len(tiles) and tiles[i] == tiles[i + 1]:
            out.append(2 * tiles[i])
            score += 2 * tiles[i]
            i += 2
        else:
            out.append(tiles[i])
            i += 1
    return out + [0] * (len(line) - len(out)), score


def move(b, d):
    n = len(b)
    nb = [row[:] for row in b]
    score = 0
    for i in range(n):
        if d in "LR":
            line = b[i][:] if d == "L" else b[i][::-1]
        else:
            line = [b[r][i] for r in range(n)] if d == "U" else [b[r][i] for r in range(n - 1, -1, -1)]
        res, s = slide(line)
        score += s
        for j in range(n):
            if d == "L":
                nb[i][j] = res[j]
            elif d == "R":
                nb[i][n - 1 - j] = res[j]
            elif d == "U":
                nb[j][i] = res[j]
            else:
                nb[n - 1 - j][i] = res[j]
    return nb, score


def over(b):
    return all(move(b, d)[0] == b for d in "LRUD")


def main(path, moves):
    b = [[int(x) for x in line.split()] for line in open(path) if line.strip()]
    score = turns = 0
    for d in moves:
        if over(b):
            break
        nb, s = move(b, d)
        if nb == b:
            continue
        turns += 1
        score += s
        empty = [(r, c) for r in range(len(nb)) for c in range(len(nb)) if nb[r][c] == 0]
        r, c = empty[(7 * turns + 3) % len(empty)]
        nb[r][c] = 4 if turns % 5 == 0 else 2
        b = nb
    for row in b:
        print(" ".join(map(str, row)))
    print(f"score {score}")
    print(f"turns {turns}")
    print("game over" if over(b) else "playing")


main(sys.argv[1], sys.argv[2] if len(sys.argv) > 2 else "")
PY
