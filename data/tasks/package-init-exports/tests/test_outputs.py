import random
import subprocess
import sys


def run(expr):
    r = subprocess.run([sys.executable, "-c", "import mathkit\nprint(repr(" + expr + "))"],
                       cwd="/app", capture_output=True, text=True, timeout=30)
    assert r.returncode == 0, r.stderr
    return eval(r.stdout)


def test_clamp_exported():
    rng = random.Random(7)
    cases = [(rng.randint(-50, 50), rng.randint(-20, 0), rng.randint(1, 20)) for _ in range(30)]
    got = run("[mathkit.clamp(v, lo, hi) for v, lo, hi in %r]" % (cases,))
    assert got == [max(lo, min(hi, v)) for v, lo, hi in cases]
    r = subprocess.run([sys.executable, "-c", "from mathkit import clamp; print(clamp(15, 0, 10))"],
                       cwd="/app", capture_output=True, text=True, timeout=30)
    assert r.stdout.strip() == "10"


def test_lerp_exported():
    rng = random.Random(8)
    cases = [(rng.randint(-9, 9), rng.randint(10, 99), rng.choice([0, 0.25, 0.5, 1, 2])) for _ in range(30)]
    got = run("[mathkit.lerp(a, b, t) for a, b, t in %r]" % (cases,))
    assert got == [a + (b - a) * t for a, b, t in cases]
    r = subprocess.run([sys.executable, "-c", "from mathkit import clamp, lerp; print(lerp(2, 4, 0.5))"],
                       cwd="/app", capture_output=True, text=True, timeout=30)
    assert r.stdout.strip() == "3.0"
