import random
import subprocess

import numpy as np


def exact(edges_lines):
    names, edges = {}, set()
    for line in edges_lines:
        p = line.split()
        if not p:
            continue
        for x in p:
            names.setdefault(x, len(names))
        if p[0] != p[1]:
            edges.add((names[p[0]], names[p[1]]))
    n, d = len(names), 0.85
    M = np.zeros((n, n))
    out = np.zeros(n)
    for u, v in edges:
        out[u] += 1
    for u, v in edges:
        M[v, u] += 1 / out[u]
    for w in range(n):
        if out[w] == 0:
            M[:, w] += 1 / n
    pr = np.linalg.solve(np.eye(n) - d * M, np.full(n, (1 - d) / n))
    pr /= pr.sum()
    return {name: pr[i] for name, i in names.items()}


def run(path):
    r = subprocess.run(["python3", "/app/pagerank.py", str(path)], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr[-1500:]
    return [(a, float(b)) for a, b in (line.split() for line in r.stdout.splitlines())]


def check(got, want):
    assert sorted(n for n, _ in got) == sorted(want)
    for name, score in got:
        assert abs(score - want[name]) < 1e-10, (name, score, want[name])
    for (n1, s1), (n2, s2) in zip(got, got[1:]):  # printed scores descending, equal ones by name
        assert s1 > s2 or (s1 == s2 and n1 < n2), (n1, s1, n2, s2)


def test_small_graphs(tmp_path):
    lines = open("/app/links.txt").read().splitlines()
    check(run("/app/links.txt"), exact(lines))
    lines = ["x y", "x y", "y z", "z z", "q x", "", "r s"]
    p = tmp_path / "g.txt"
    p.write_text("\n".join(lines) + "\n")
    got = run(p)
    check(got, exact(lines))
    assert abs(sum(s for _, s in got) - 1) < 1e-8
    lines = ["a b", "b a", "c d", "d c"]   # symmetric: all four tie, printed by name
    p.write_text("\n".join(lines) + "\n")
    got = run(p)
    assert [n for n, _ in got] == ["a", "b", "c", "d"] and all(abs(s - 0.25) < 1e-10 for _, s in got)


def test_large_graph(tmp_path):
    rng = random.Random(6)
    n = 1500
    lines = [f"n{rng.randrange(n)} n{min(n - 1, int(rng.paretovariate(1.2)) * 7 % n)}" for _ in range(9000)]
    lines += [f"leaf{i} n{rng.randrange(n)}" for i in range(200)]
    p = tmp_path / "big.txt"
    p.write_text("\n".join(lines) + "\n")
    check(run(p), exact(lines))
    big = [f"v{rng.randrange(20000)} v{rng.randrange(20000)}" for _ in range(100000)]
    p.write_text("\n".join(big) + "\n")
    got = run(p)
    assert abs(sum(s for _, s in got) - 1) < 1e-6 and len(got) == len({w for ln in big for w in ln.split()})
