import random
import subprocess


def run(tmp_path, board, moves):
    p = tmp_path / "b.txt"
    p.write_text("\n".join(" ".join(map(str, row)) for row in board) + "\n")
    r = subprocess.run(["python3", "/app/engine2048.py", str(p), moves], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr[-1500:]
    return r.stdout.splitlines()


def rot(b):  # rotate clockwise
    return [list(row) for row in zip(*b[::-1])]


def left(b):
    out, score = [], 0
    for row in b:
        t = [v for v in row if v]
        res = []
        while t:
            if len(t) > 1 and t[0] == t[1]:
                res.append(t[0] * 2)
                score += t[0] * 2
                t = t[2:]
            else:
                res.append(t.pop(0))
        out.append(res + [0] * (len(row) - len(res)))
    return out, score


def step(b, d):
    k = {"L": 0, "D": 1, "R": 2, "U": 3}[d]
    for _ in range(k):
        b = rot(b)
    b, s = left(b)
    for _ in range((4 - k) % 4):
        b = rot(b)
    return b, s


def ref(board, moves):
    b, score, t = [r[:] for r in board], 0, 0
    dead = lambda x: all(step(x, d)[0] == x for d in "LRUD")  # noqa: E731
    for d in moves:
        if dead(b):
            break
        nb, s = step(b, d)
        if nb == b:
            continue
        t += 1
        score += s
        e = [(i, j) for i in range(len(nb)) for j in range(len(nb)) if nb[i][j] == 0]
        i, j = e[(7 * t + 3) % len(e)]
        nb[i][j] = 4 if t % 5 == 0 else 2
        b = nb
    return [" ".join(map(str, r)) for r in b] + [f"score {score}", f"turns {t}", "game over" if dead(b) else "playing"]


B = [[2, 2, 2, 2], [4, 4, 8, 0], [2, 0, 2, 4], [0, 0, 0, 0]]


def test_single_moves(tmp_path):
    assert run(tmp_path, B, "L") == ["4 4 2 0", "8 8 0 0", "4 4 0 0", "0 0 0 0", "score 20", "turns 1", "playing"]
    assert run(tmp_path, B, "R") == ["2 0 4 4", "0 0 8 8", "0 0 4 4", "0 0 0 0", "score 20", "turns 1", "playing"]
    assert run(tmp_path, B, "U") == ["2 2 2 2", "4 4 8 4", "2 0 2 0", "0 0 2 0", "score 0", "turns 1", "playing"]
    assert run(tmp_path, [[0, 0, 2], [0, 0, 2], [0, 0, 4]], "RU") == ["0 0 4", "0 2 4", "0 0 0", "score 4", "turns 1", "playing"]


def test_spawn_and_sequences(tmp_path):
    rng = random.Random(2048)
    for n in (4, 3, 5):
        for _ in range(3):
            board = [[rng.choice([0, 0, 0, 2, 2, 4, 8]) for _ in range(n)] for _ in range(n)]
            moves = "".join(rng.choice("LRUD") for _ in range(rng.randint(5, 40)))
            assert run(tmp_path, board, moves) == ref(board, moves), (board, moves)
    board = [[2, 0], [0, 0]]
    assert run(tmp_path, board, "RRLLDU") == ref(board, "RRLLDU")


def test_game_over(tmp_path):
    full = [[2, 4, 2, 4], [4, 2, 4, 2], [2, 4, 2, 4], [4, 2, 4, 2]]
    assert run(tmp_path, full, "LURD") == ["2 4 2 4", "4 2 4 2", "2 4 2 4", "4 2 4 2", "score 0", "turns 0", "game over"]
    rng = random.Random(7)
    board = [[0] * 4 for _ in range(4)]
    board[0][0] = 2
    moves = "".join(rng.choice("LRUD") for _ in range(600))
    want = ref(board, moves)
    assert want[-1] == "game over"
    assert run(tmp_path, board, moves) == want
    small = [[2, 4], [8, 0]]
    assert run(tmp_path, small, "LLLLUUDDRR") == ref(small, "LLLLUUDDRR")
