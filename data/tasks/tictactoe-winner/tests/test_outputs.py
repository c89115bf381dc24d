import subprocess
import tempfile


def state(board):
    with tempfile.NamedTemporaryFile("w", suffix=".txt", delete=False) as f:
        f.write("\n".join(board) + "\n")
    out = subprocess.run(["python3", "/app/ttt.py", f.name], capture_output=True, text=True, timeout=10)
    assert out.returncode == 0, out.stderr
    return out.stdout.strip()


def test_row_and_column_wins():
    assert state(["XXX", "OO.", "..."]) == "X"
    assert state(["X.X", "OOO", "X.."]) == "O"
    assert state(["OX.", "OX.", ".XO"]) == "X"
    assert state(["XXO", "X.O", ".XO"]) == "O"


def test_diagonal_wins():
    assert state(["X.O", ".XO", "..X"]) == "X"
    assert state(["XXO", "XO.", "O.."]) == "O"


def test_draw_and_ongoing():
    assert state(["XOX", "XOO", "OXX"]) == "draw"
    assert state(["OXO", "XXO", "XOX"]) == "draw"
    assert state(["...", "...", "..."]) == "ongoing"
    assert state(["XO.", ".X.", "..O"]) == "ongoing"
