import random
import subprocess

import pytest


def build():
    subprocess.run(["make", "-C", "/app", "clean"], capture_output=True, timeout=60)
    r = subprocess.run(["make", "-C", "/app"], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr[-2000:]


def run(tmp_path, script):
    p = tmp_path / "s.mc"
    p.write_text(script)
    return subprocess.run(["/app/matcalc", str(p)], capture_output=True, text=True, timeout=30)


def nums(text):
    return [[float(x) for x in line.split()] for line in text.splitlines()]


def close(a, b, tol=1e-6):
    return abs(a - b) <= tol * max(1.0, abs(b))


def mat_block(name, m):
    return f"matrix {name} {len(m)} {len(m[0])}\n" + "".join(" ".join(repr(x) for x in row) + "\n" for row in m)


def matmul(a, b):
    return [[sum(a[i][k] * b[k][j] for k in range(len(b))) for j in range(len(b[0]))] for i in range(len(a))]


def det(m):
    m = [row[:] for row in m]
    n, d = len(m), 1.0
    for c in range(n):
        p = max(range(c, n), key=lambda r: abs(m[r][c]))
        if m[p][c] == 0:
            return 0.0
        if p != c:
            m[p], m[c] = m[c], m[p]
            d = -d
        d *= m[c][c]
        for r in range(c + 1, n):
            f = m[r][c] / m[c][c]
            for k in range(c, n):
                m[r][k] -= f * m[c][k]
    return d


def test_builds_and_example():
    build()
    r = subprocess.run(["/app/matcalc", "/app/example.mc"], capture_output=True, text=True, timeout=30)
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines() == ["14 32", "32 77", "54", "9.53939"]
    r = subprocess.run(["/app/matcalc"], input="matrix Q 1 2\n3 4\nnorm Q\n", capture_output=True, text=True, timeout=30)
    assert r.stdout == "5\n"


def test_products_and_transpose(tmp_path):
    build()
    rng = random.Random(12)
    for shape in [(3, 4, 2), (1, 5, 1), (4, 1, 3), (5, 5, 5)]:
        a = [[rng.randint(-9, 9) for _ in range(shape[1])] for _ in range(shape[0])]
        b = [[rng.randint(-9, 9) / 4 for _ in range(shape[2])] for _ in range(shape[1])]
        r = run(tmp_path, mat_block("A", a) + mat_block("B", b) + "mul C A B\nprint C\ntranspose D C\nprint D\n"
                "# comment line\n\ntranspose A A\nprint A\n")
        assert r.returncode == 0, r.stderr
        got = nums(r.stdout)
        c = matmul(a, b)
        want = c + [list(col) for col in zip(*c)] + [list(col) for col in zip(*a)]
        assert len(got) == len(want)
        for gr, wr in zip(got, want):
            assert len(gr) == len(wr) and all(close(x, y) for x, y in zip(gr, wr))


def test_determinants(tmp_path):
    build()
    cases = [[[0, 1], [1, 0]], [[0, 2, 1], [3, 0, 0], [1, 1, 0]], [[1, 2], [2, 4]],
             [[2, 0, 0, 0], [0, 0, 3, 0], [0, 0, 0, 4], [0, 5, 0, 0]], [[7.5]]]
    rng = random.Random(5)
    cases.append([[rng.randint(-5, 5) for _ in range(6)] for _ in range(6)])
    cases.append([[1e-20, 1], [1, 1]])
    for m in cases:
        r = run(tmp_path, mat_block("M", m) + "det M\n")
        assert r.returncode == 0, r.stderr
        want = det([[float(x) for x in row] for row in m])
        got = float(r.stdout)
        if abs(want) < 1e-9:
            assert abs(got) < 1e-9 and r.stdout.strip() != "-0", (m, r.stdout)
        else:
            assert close(got, want), (m, got, want)


def test_errors(tmp_path):
    build()
    r = run(tmp_path, "matrix A 2 2\n1 2\n3 4\nmatrix B 3 1\n1\n2\n3\nmul C A B\n")
    assert (r.returncode, r.stderr.strip()) == (1, "error: line 8: shape mismatch")
    r = run(tmp_path, "matrix A 1 1\n5\nprint A\nfrobnicate A\nprint A\n")
    assert (r.returncode, r.stdout, r.stderr.strip()) == (1, "5\n", "error: line 4: unknown command")
    r = run(tmp_path, "matrix A 2 3\n1 2 3\n4 5 6\ndet A\n")
    assert (r.returncode, r.stderr.strip()) == (1, "error: line 4: not square")
    r = run(tmp_path, "matrix A 2 2\n1 2\n3\n")
    assert (r.returncode, r.stderr.strip()) == (1, "error: line 3: bad matrix row")
    r = subprocess.run(["/app/matcalc", str(tmp_path / "missing.mc")], capture_output=True, text=True, timeout=30)
    assert r.returncode == 2
