import random
import subprocess


def run(tmp_path, lines):
    p = tmp_path / "l.txt"
    p.write_text("".join(f"{a} {b} {c}\n" for a, b, c in lines))
    r = subprocess.run(["python3", "/app/du_tree.py", str(p)], capture_output=True, text=True, timeout=200)
    assert r.returncode == 0, r.stderr[-1500:]
    return r.stdout.splitlines()


def expected(lines):
    par = {a: b for a, b, _ in lines}
    tot = {a: c for a, _, c in lines}
    depth = {}
    for a in par:
        d, x = 0, a
        stack = []
        while x != "-" and x not in depth:
            stack.append(x)
            x = par[x]
        base = depth.get(x, -1)
        for y in reversed(stack):
            base += 1
            depth[y] = base
    for a in sorted(par, key=lambda n: -depth[n]):
        if par[a] != "-":
            tot[par[a]] += tot[a]
    return [f"{n} {tot[n]}" for n in sorted(tot, key=lambda n: (-tot[n], n))]


def check_small(tmp_path):
    r = subprocess.run(["python3", "/app/du_tree.py", "/app/listing.txt"], capture_output=True, text=True, timeout=200)
    assert r.stdout.splitlines() == ["root 168", "home 151", "alice 100", "bob 50", "etc 7", "passwd 2"]
    lines = [("b", "a", 3), ("c", "b", 4), ("a", "-", 0), ("d", "a", 7), ("e", "c", 0)]
    assert run(tmp_path, lines) == ["a 14", "b 7", "d 7", "c 4", "e 0"]


def test_deep_chain(tmp_path):
    n = 120000
    lines = [(f"n{i}", f"n{i - 1}" if i else "-", i % 10) for i in range(n)]
    random.Random(2).shuffle(lines)
    out = run(tmp_path, lines)
    assert out == expected(lines)
    check_small(tmp_path)


def test_wide_tree(tmp_path):
    rng = random.Random(8)
    lines = [("root", "-", 1)]
    for i in range(1, 100000):
        lines.append((f"d{i}", "root" if i < 50 else f"d{rng.randrange(max(1, i - 40), i)}", rng.randrange(0, 5000)))
    rng.shuffle(lines)
    assert run(tmp_path, lines) == expected(lines)
    check_small(tmp_path)
