import random
import subprocess


def mines(*args):
    return subprocess.run(["python3", "/app/mines.py", *map(str, args)], capture_output=True, text=True, timeout=30)


def ref_numbers(b):
    h, w = len(b), len(b[0])
    return ["".join("*" if b[r][c] == "*" else str(sum(b[y][x] == "*" for y in range(max(0, r - 1), min(h, r + 2))
                                                      for x in range(max(0, c - 1), min(w, c + 2))))
                    for c in range(w)) for r in range(h)]


def board_file(tmp_path, rows):
    p = tmp_path / "b.txt"
    p.write_text("\n".join(rows) + "\n")
    return p


def test_numbers(tmp_path):
    r = mines("numbers", "/app/board.txt")
    assert r.stdout.split() == ["*1000", "12110", "01*10", "01121", "0001*"]
    rng = random.Random(3)
    rows = ["".join("*" if rng.random() < 0.2 else "." for _ in range(23)) for _ in range(11)]
    r = mines("numbers", board_file(tmp_path, rows))
    assert r.returncode == 0
    assert r.stdout.split() == ref_numbers(rows)


def test_click_flood_fill(tmp_path):
    r = mines("click", "/app/board.txt", 0, 4)
    assert r.returncode == 0
    assert r.stdout.split() == ["#1000", "#2110", "###10", "###21", "#####"]
    rows = ["......", ".**...", "......", "......", "....*.", "......"]
    p = board_file(tmp_path, rows)
    r = mines("click", p, 5, 0)
    assert r.stdout.split() == ["######", "######", "1221##", "0001##", "0001##", "0001##"]
    r = mines("click", p, 4, 3)
    assert r.stdout.split() == ["######", "######", "######", "######", "###1##", "######"]
    r = mines("click", p, 0, 5)
    assert r.stdout.split() == ["###100", "###100", "###100", "###111", "######", "######"]


def test_boom_win_errors(tmp_path):
    r = mines("click", "/app/board.txt", 2, 2)
    assert (r.returncode, r.stdout.strip()) == (3, "BOOM")
    p = board_file(tmp_path, ["*..", "...", "..."])
    r = mines("click", p, 2, 2)
    assert r.returncode == 0
    assert r.stdout.split() == ["#10", "110", "000", "WIN"]
    r = mines("click", p, 3, 0)
    assert r.returncode == 2 and "bad cell" in r.stderr
    r = mines("click", p, 0, -1)
    assert r.returncode == 2
