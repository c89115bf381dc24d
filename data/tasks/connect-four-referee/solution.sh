#!/bin/bash
set -e
cat > /app/connect4.py <<'PY'
import sys

COLS, ROWS = 7, 6


def wins(board, c, r, p):
    for dc, dr in ((1, 0), (0, 1), (1, 1), (1, -1)):
        n = 1
        for s in (1, -1):
            cc, rr = c + s * dc, r + s * dr
            while 0 <= cc < COLS and 0 <= rr < ROWS and board[cc][rr] == p:
                n += 1
                cc += s * dc
                rr += s * dr
        if n >= 4:
            return True
    return False


def main(path):
    moves = [line.strip() for line in open(path) if line.strip()]
    board = [[None] * ROWS for _ in range(COLS)]
    heights = [0] * COLS
    result = None
    for k, m in enumerate(moves, 1):
        player = "X" if k % 2 else "O"
        if result is not None or not m.isdigit() or not 1 <= int(m) <= COLS or heights[int(m) - 1] == ROWS:
            print(f"invalid move {k}")
            return 1
        c = int(m) - 1
        r = heights[c]
        board[c][r] = player
        heights[c] += 1
        if wins(board, c, r, player):
            result = f"{player} wins after {k} moves"
        elif k == COLS * ROWS:
            result = "draw"
    if result is None:
        result = ("X" if len(moves) % 2 == 0 else "O") + " to move"
    print(result)
    return 0


sys.exit(main(sys.argv[1]))
PY
