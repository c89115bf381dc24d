import bisect
import random
import subprocess


def run(path, timeout):
    r = subprocess.run(["python3", "/app/overlaps.py", str(path)], capture_output=True, text=True, timeout=timeout)
    assert r.returncode == 0, r.stderr
    return r.stdout


def write(path, rows):
    path.write_text("id,start,end\n" + "".join(f"{i},{s},{e}\n" for i, s, e in rows))


def brute(rows):
    return [sum(1 for j, (_, s2, e2) in enumerate(rows) if j != i and s1 < e2 and s2 < e1)
            for i, (_, s1, e1) in enumerate(rows)]


def test_small_correct(tmp_path):
    assert run("/app/bookings.csv", 60) == "A 1\nB 1\nC 2\nD 0\n"
    rng = random.Random(11)
    rows = []
    for k in range(300):
        s = rng.randrange(0, 500)
        rows.append((f"b{k}", s, s + rng.choice([1, 5, 10, 10, 30])))
    rows.append(("same1", 100, 110))
    rows.append(("same2", 100, 110))
    p = tmp_path / "s.csv"
    write(p, rows)
    want = "".join(f"{r[0]} {n}\n" for r, n in zip(rows, brute(rows)))
    assert run(p, 60) == want


def test_large_fast(tmp_path):
    rng = random.Random(5)
    rows = []
    for k in range(120000):
        s = rng.randrange(0, 10_000_000)
        rows.append((f"r{k}", s, s + rng.randrange(1, 600)))
    p = tmp_path / "big.csv"
    write(p, rows)
    starts = sorted(r[1] for r in rows)
    ends = sorted(r[2] for r in rows)
    n = len(rows)
    want = [n - 1 - bisect.bisect_right(ends, s) - (n - bisect.bisect_left(starts, e)) for _, s, e in rows]
    out = run(p, 200).splitlines()
    assert len(out) == n
    sample = random.Random(1).sample(range(n), 2000)
    for i in sample:
        assert out[i] == f"r{i} {want[i]}"
