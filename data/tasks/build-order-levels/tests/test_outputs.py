import random
import subprocess
import tempfile


def run(text, *targets):
    with tempfile.NamedTemporaryFile("w", delete=False) as f:
        f.write(text)
    r = subprocess.run(["/app/buildorder", f.name, *targets], capture_output=True, text=True, timeout=30)
    return r.returncode, r.stdout, r.stderr


def levels(text, *targets):
    rc, out, err = run(text, *targets)
    assert rc == 0, err
    return [l.split(" ") for l in out.split("\n") if l]


def test_example():
    r = subprocess.run(["/app/buildorder", "/app/deps.txt"], capture_output=True, text=True, timeout=30)
    assert r.stdout.split("\n")[:-1] == ["config.h libcore openssl", "libgfx libnet", "libui", "app", "tests"]
    r = subprocess.run(["/app/buildorder", "/app/deps.txt", "libui"], capture_output=True, text=True, timeout=30)
    assert r.stdout.split("\n")[:-1] == ["libcore", "libgfx", "libui"]
    # the example with two more rules: the output must follow the file, not a fixed text
    text = open("/app/deps.txt").read() + "docs: tests libui\nlibgfx: zlib\n"
    assert levels(text) == [["config.h", "libcore", "openssl", "zlib"], ["libgfx", "libnet"], ["libui"], ["app"], ["tests"], ["docs"]]


def reference(edges, nodes):
    deps = {n: set() for n in nodes}
    for a, b in edges:
        deps[a].add(b)
    lvl = {}
    def L(n):
        if n not in lvl:
            lvl[n] = 0 if not deps[n] else 1 + max(L(d) for d in deps[n])
        return lvl[n]
    out = {}
    for n in nodes:
        out.setdefault(L(n), []).append(n)
    return [sorted(out[k]) for k in sorted(out)]


def test_hidden_graphs():
    rnd = random.Random(8)
    nodes = [f"n{i:02d}" for i in range(40)]
    edges = set()
    for i in range(40):
        for j in rnd.sample(range(i + 1, 40), min(3, 39 - i)) if i < 39 else []:
            if rnd.random() < 0.5:
                edges.add((nodes[j], nodes[i]))
    lines = []
    for a in nodes:
        ds = sorted(b for x, b in edges if x == a)
        rnd.shuffle(ds)
        if ds and rnd.random() < 0.3:
            half = len(ds) // 2
            lines.append(f"{a}: {' '.join(ds[:half])}  # part one")
            lines.append(f"{a} :\t{' '.join(ds[half:])}")
        elif ds:
            lines.append(f"{a}: " + " \\\n    ".join(ds))
        else:
            lines.append(f"{a}:")
    rnd.shuffle(lines)
    text = "\n\n".join(lines) + "\n"
    assert levels(text) == reference(edges, nodes)
    assert levels("a: b c\nb: c\nd:\n", "a") == [["c"], ["b"], ["a"]]
    assert levels("x.o: x.c\nx.c:\n", "x.c") == [["x.c"]]


def test_cycles_and_errors():
    rc, out, err = run("a: b\nb: c\nc: a\nd: a\ne: f\nf:\n")
    assert (rc, out) == (1, "") and err.strip() == "error: cycle: a b c d"
    rc, out, err = run("a: a\nb:\n")
    assert (rc, out) == (1, "") and err.strip() == "error: cycle: a"
    assert levels("a: b\nb: c\nc: a\nd: e\n", "d") == [["e"], ["d"]]
    rc, out, err = run("a: b\njust words\n")
    assert rc == 2 and out == "" and err.strip() == "error: line 2"
    rc, out, err = run("a: b \\\n  c\n: x\n")
    assert rc == 2 and err.strip() == "error: line 3"
    rc, out, err = run("a: b\n", "zzz")
    assert rc == 2 and out == ""
