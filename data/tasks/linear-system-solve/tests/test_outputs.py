import math
import subprocess
import tempfile
from pathlib import Path

DATA = {"A": [[0, 1, -2, -4, 3, 9, 0], [0, -1, 3, 9, -9, -2, -9], [5, -5, -5, 1, -4, -1, 9], [-8, -6, 9, -8, 4, 0, -3], [-7, 2, 6, -5, 8, -9, -6], [-6, -5, -4, -8, -1, 1, -2], [-9, 9, -4, 4, -8, 0, 3]], "b": [-11, -14, -15, 6, -19, 11, 5], "x": [51.453959623697486, 47.93915488772284, 34.173815662395334, -79.36661567120031, -63.39107698572769, -13.098306143394481, -5.444549309222383], "det": -1453724.0}


def floats(text):
    return [float(t) for t in text.split()]


def test_solution_values():
    x = floats(Path("/app/x.txt").read_text())
    assert len(x) == len(DATA["x"])
    for got, want in zip(x, DATA["x"]):
        assert math.isclose(got, want, rel_tol=1e-8, abs_tol=1e-10), (got, want)


def test_determinant():
    (det,) = floats(Path("/app/det.txt").read_text())
    assert math.isclose(det, DATA["det"], rel_tol=1e-8)


def test_solver_script_general():
    # a different, well-conditioned 4x4 system whose first pivot is zero
    A = [[0, 2, 1, -1], [3, -1, 0, 2], [1, 1, 4, 0], [2, 0, -2, 5]]
    x_true = [1.5, -2.0, 0.25, 3.0]
    b = [sum(a * x for a, x in zip(row, x_true)) for row in A]
    with tempfile.NamedTemporaryFile("w", suffix=".txt", delete=False) as f:
        f.write("# n = 4\n")
        for row, bb in zip(A, b):
            f.write(" ".join(str(v) for v in row) + " | " + repr(bb) + "\n")
    r = subprocess.run(["python3", "/app/solve.py", f.name], capture_output=True, text=True, timeout=30)
    assert r.returncode == 0, r.stderr
    got = floats(r.stdout)
    assert len(got) == 4
    for g, w in zip(got, x_true):
        assert math.isclose(g, w, rel_tol=1e-9, abs_tol=1e-9), (got, x_true)
