import subprocess


def judge(tmp_path, moves):
    p = tmp_path / "g.txt"
    p.write_text("\n".join(str(m) for m in moves) + "\n")
    r = subprocess.run(["python3", "/app/connect4.py", str(p)], capture_output=True, text=True, timeout=30)
    return r.returncode, r.stdout.strip()


# a full 42-move game with no four in a row: columns filled in pairs with alternating colours
DRAW = [1, 2, 1, 2, 1, 2, 2, 1, 2, 1, 2, 1, 3, 4, 3, 4, 3, 4, 4, 3, 4, 3, 4, 3,
        5, 6, 5, 6, 5, 6, 6, 5, 6, 5, 6, 5, 7, 7, 7, 7, 7, 7]


def test_wins(tmp_path):
    r = subprocess.run(["python3", "/app/connect4.py", "/app/game1.txt"], capture_output=True, text=True, timeout=30)
    assert (r.returncode, r.stdout.strip()) == (0, "X wins after 7 moves")
    assert judge(tmp_path, [1, 2, 1, 2, 1, 2, 1]) == (0, "X wins after 7 moves")
    assert judge(tmp_path, [7, 1, 2, 1, 3, 1, 2, 1]) == (0, "O wins after 8 moves")
    # rising diagonal for X: (1,1) (2,2) (3,3) (4,4)
    assert judge(tmp_path, [1, 2, 2, 3, 3, 4, 3, 4, 4, 7, 4]) == (0, "X wins after 11 moves")
    # falling diagonal for O: (7,1) (6,2) (5,3) (4,4)
    assert judge(tmp_path, [1, 7, 6, 6, 5, 5, 4, 5, 4, 4, 1, 4]) == (0, "O wins after 12 moves")
    # five in a row completed in the middle
    assert judge(tmp_path, [1, 1, 2, 2, 4, 4, 5, 5, 3]) == (0, "X wins after 9 moves")


def test_draw_and_in_progress(tmp_path):
    assert judge(tmp_path, DRAW) == (0, "draw")
    assert judge(tmp_path, DRAW[:41]) == (0, "O to move")
    assert judge(tmp_path, [4, 4, 3]) == (0, "O to move")
    assert judge(tmp_path, []) == (0, "X to move")
    p = tmp_path / "s.txt"
    p.write_text("  4 \n\n 5\n")
    r = subprocess.run(["python3", "/app/connect4.py", str(p)], capture_output=True, text=True, timeout=30)
    assert (r.returncode, r.stdout.strip()) == (0, "X to move")


def test_invalid_moves(tmp_path):
    assert judge(tmp_path, [4, 8, 1]) == (1, "invalid move 2")
    assert judge(tmp_path, [0]) == (1, "invalid move 1")
    assert judge(tmp_path, [3, 3, 3, 3, 3, 3, 3]) == (1, "invalid move 7")
    assert judge(tmp_path, [1, 2, 1, 2, 1, 2, 1, 2]) == (1, "invalid move 8")
    assert judge(tmp_path, [2, "x", 3]) == (1, "invalid move 2")
    assert judge(tmp_path, DRAW + [1]) == (1, "invalid move 43")
