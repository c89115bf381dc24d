import collections
import json
import random
import re
import subprocess
import sys

VOCAB = ["the", "The", "cat", "Cat", "a", "I", "don't", "x_1", "zebra", "apple", "Apple", "be", "42", "go"]


def make_files(tmp_path, seed, n=2):
    rng = random.Random(seed)
    paths = []
    for i in range(n):
        words = [rng.choice(VOCAB) for _ in range(rng.randint(30, 80))]
        seps = [rng.choice([" ", ", ", ".\n", " - ", "!  ", "\t"]) for _ in words]
        p = tmp_path / ("f%d_%d.txt" % (seed, i))
        p.write_text("".join(w + s for w, s in zip(words, seps)))
        paths.append(p)
    return paths


def expected(paths, ignore_case=False, min_length=1, top=None):
    c = collections.Counter()
    for p in paths:
        for w in re.findall(r"[A-Za-z0-9_']+", p.read_text()):
            w = w.lower() if ignore_case else w
            if len(w) >= min_length:
                c[w] += 1
    items = sorted(c.items(), key=lambda kv: (-kv[1], kv[0]))
    return items[:top] if top is not None else items


def run(*args):
    return subprocess.run([sys.executable, "/app/wordfreq.py", *map(str, args)], capture_output=True, text=True, timeout=30)


def lines(items):
    return "".join("%d %s\n" % (n, w) for w, n in items)


def test_plain_counts(tmp_path):
    paths = make_files(tmp_path, 1)
    r = run(*paths)
    assert r.returncode == 0, r.stderr
    assert r.stdout == lines(expected(paths))


def test_options(tmp_path):
    paths = make_files(tmp_path, 2, 3)
    r = run(*paths, "--ignore-case", "--top", 4)
    assert r.returncode == 0, r.stderr
    assert r.stdout == lines(expected(paths, ignore_case=True, top=4))
    r = run("--min-length", 3, *paths)
    assert r.stdout == lines(expected(paths, min_length=3))
    r = run(paths[0], "--min-length", 2, "--ignore-case", "--top", 3)
    assert r.stdout == lines(expected(paths[:1], ignore_case=True, min_length=2, top=3))


def test_json_and_errors(tmp_path):
    paths = make_files(tmp_path, 3)
    r = run(*paths, "--json", "--top", 5, "--ignore-case")
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout) == [{"word": w, "count": n} for w, n in expected(paths, ignore_case=True, top=5)]
    r = run(paths[0], tmp_path / "missing.txt")
    assert r.returncode == 2 and r.stdout == "" and r.stderr.strip()
