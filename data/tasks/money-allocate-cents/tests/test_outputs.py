import importlib.util
import random
import subprocess
import sys
from fractions import Fraction

import pytest


def load():
    spec = importlib.util.spec_from_file_location("allocate", "/app/allocate.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod.allocate


def ref(total, weights):
    ws = [Fraction(w) for w in weights]
    sign, t = (-1 if total < 0 else 1), abs(total)
    exact = [t * w / sum(ws) for w in ws]
    sh = [e.numerator // e.denominator for e in exact]
    for i in sorted(range(len(ws)), key=lambda i: (-(exact[i] - sh[i]), i))[: t - sum(sh)]:
        sh[i] += 1
    return [sign * x for x in sh]


def test_examples():
    a = load()
    assert a(100, [1, 1, 1]) == [34, 33, 33]
    assert a(5, [1, 1]) == [3, 2]
    assert a(-100, [1, 1, 1]) == [-34, -33, -33]
    assert a(1000, [0.7, 0.2, 0.1]) == [700, 200, 100]
    assert a(7, [0, 1, 0]) == [0, 7, 0]
    assert a(10, [3, 0.5, 2.5]) == [5, 1, 4]


def test_random_reference():
    a = load()
    rng = random.Random(66)
    for _ in range(400):
        n = rng.randint(1, 8)
        ws = [rng.choice([0, 1, 2, 3, 5, 7, 0.25, 0.1, 1.5]) for _ in range(n)]
        if not any(ws):
            ws[0] = 1
        total = rng.randint(-5000, 100000)
        got = a(total, ws)
        assert got == ref(total, ws), (total, ws)
        assert sum(got) == total


def test_cli_and_errors():
    a = load()
    for bad in [[], [1, -1], [0, 0]]:
        with pytest.raises(ValueError):
            a(10, bad)
    r = subprocess.run([sys.executable, "/app/allocate.py", "1001", "0.1", "0.3", "0.6"], capture_output=True, text=True, timeout=30)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == " ".join(map(str, ref(1001, [Fraction("0.1"), Fraction("0.3"), Fraction("0.6")])))
    r = subprocess.run([sys.executable, "/app/allocate.py", "50", "0", "0"], capture_output=True, text=True, timeout=30)
    assert r.returncode == 1 and r.stderr.strip() and not r.stdout.strip()
