import heapq
import importlib.util
import json
import random
import subprocess
import sys

import pytest


def load():
    spec = importlib.util.spec_from_file_location("buildorder", "/app/buildorder.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def reference(deps):
    g = {k: set(v) for k, v in deps.items()}
    for v in list(g.values()):
        for d in v:
            g.setdefault(d, set())
    done, out = set(), []
    while len(out) < len(g):
        k = min(k for k in g if k not in done and g[k] <= done)
        out.append(k)
        done.add(k)
    return out


def rand_dag(rng):
    names = rng.sample(["n%02d" % i for i in range(40)], rng.randint(3, 15))
    deps = {}
    for i, n in enumerate(names):
        if rng.random() < 0.8:
            deps[n] = rng.sample(names[:i], rng.randint(0, min(i, 3)))
    return deps


def test_order_unique_smallest_first():
    m = load()
    assert m.build_order(json.load(open("/app/deps.json"))) == ["core", "docs", "lib", "utils", "app"]
    rng = random.Random(12)
    for _ in range(100):
        d = rand_dag(rng)
        assert m.build_order(d) == reference(d)


def check_cycle(m, deps):
    with pytest.raises(m.CycleError) as ei:
        m.build_order(deps)
    assert isinstance(ei.value, ValueError)
    c = ei.value.cycle
    assert len(c) >= 2 and c[0] == c[-1] and len(set(c[:-1])) == len(c) - 1
    for a, b in zip(c, c[1:]):
        assert b in deps.get(a, []), (a, b, c)


def test_cycle_error():
    m = load()
    check_cycle(m, {"a": ["b"], "b": ["c"], "c": ["a"], "z": []})
    check_cycle(m, {"x": ["x"]})
    rng = random.Random(13)
    for _ in range(30):
        d = rand_dag(rng)
        keys = sorted(d)
        if len(keys) < 2:
            continue
        a, b = keys[0], keys[-1]
        d[a] = list(d[a]) + [b]
        d[b] = list(d[b]) + [a]
        check_cycle(m, d)


def test_cli(tmp_path):
    rng = random.Random(14)
    d = rand_dag(rng)
    p = tmp_path / "d.json"
    p.write_text(json.dumps(d))
    r = subprocess.run([sys.executable, "/app/buildorder.py", str(p)], capture_output=True, text=True, timeout=30)
    assert r.returncode == 0, r.stderr
    assert r.stdout.split() == reference(d)
    p.write_text(json.dumps({"p": ["q"], "q": ["p"]}))
    r = subprocess.run([sys.executable, "/app/buildorder.py", str(p)], capture_output=True, text=True, timeout=30)
    assert r.returncode == 1
    assert r.stderr.strip() in ("cycle: p -> q -> p", "cycle: q -> p -> q")
