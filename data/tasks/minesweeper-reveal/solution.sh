#!/bin/bash
set -e
cat > /app/mines.py <<'PY'
import sys


def load(path):
    return [line.rstrip("\n") for line in open(path) if line.strip()]


def numbers(b):
    h, w = len(b), len(b[0])
    out = []
    for r in range(h):
        row = ""
        for c in range(w):
            if b[r][c] == "*":
                row += "*"
            else:
                row += str(sum(b[rr][cc] == "*" for rr in range(max(0, r - 1), min(h, r + 2))
                               for cc in range(max(0, c - 1), min(w, c + 2))))
        out.append(row)
    return out


def main(argv):
    b = load(argv[2])
    nums = numbers(b)
    if argv[1] == "numbers":
        print("\n".join(nums))
        return 0
    h, w = len(b), len(b[0])
    r, c = int(argv[3]), int(argv[4])
    if not (0 <= r < h and 0 <= c < w):
        print("bad cell", file=sys.stderr)
        return 2
    if b[r][c] == "*":
        print("BOOM")
        return 3
    seen = {(r, c)}
    stack = [(r, c)]
    while stack:
        y, x = stack.pop()
        if nums[y][x] == "0":
            for yy in range(max(0, y - 1), min(h, y + 2)):
                for xx in range(max(0, x - 1), min(w, x + 2)):
                    if (yy, xx) not in seen:
                        seen.add((yy, xx))
                        stack.append((yy, xx))
    for y in range(h):
        print("".join(nums[y][x] if (y, x) in seen else "#" for x in range(w)))
    if len(seen) == sum(row.count(".") for row in b):
        print("WIN")
    return 0


sys.exit(main(sys.argv))
PY
