from pathlib import Path

PUZZLE = ["53..7....", "6..195...", ".98....6.", "8...6...3", "4..8.3..1",
          "7...2...6", ".6....28.", "...419..5", "....8..79"]


def grid():
    return [l.strip() for l in Path("/app/solution.txt").read_text().splitlines() if l.strip()]


def test_format():
    g = grid()
    assert len(g) == 9 and all(len(r) == 9 and r.isdigit() and "0" not in r for r in g), g


def test_givens_kept():
    g = grid()
    for r in range(9):
        for c in range(9):
            if PUZZLE[r][c] != ".":
                assert g[r][c] == PUZZLE[r][c], (r, c)


def test_valid_solution():
    g = grid()
    full = set("123456789")
    for i in range(9):
        assert set(g[i]) == full
        assert {g[r][i] for r in range(9)} == full
        br, bc = 3 * (i // 3), 3 * (i % 3)
        assert {g[br + r][bc + c] for r in range(3) for c in range(3)} == full
