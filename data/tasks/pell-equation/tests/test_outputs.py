from math import isqrt


def pell(d, target):
    """Smallest positive (x, y) with x^2 - d*y^2 = target (target is 1 or -1), or None."""
    a0 = isqrt(d)
    if a0 * a0 == d:
        return None
    m, q, a = 0, 1, a0
    p_prev, p = 1, a0
    q_prev, qq = 0, 1
    period = 0
    while True:
        m = q * a - m
        q = (d - m * m) // q
        a = (a0 + m) // q
        period += 1
        if a == 2 * a0:
            break
        p_prev, p = p, a * p + p_prev
        q_prev, qq = qq, a * qq + q_prev
    # (p, qq) is the convergent h_{period-1}
    x, y = p, qq
    if target == -1:
        return (x, y) if period % 2 == 1 else None
    if period % 2 == 1:
        x, y = x * x + d * y * y, 2 * x * y
    return x, y


import random
import subprocess


def run(*args):
    p = subprocess.run(["python3", "/app/pell.py", *map(str, args)], capture_output=True, text=True, timeout=60)
    assert p.returncode == 0, p.stderr
    return p.stdout.strip()


def expect(d, target, out):
    want = pell(d, target)
    if want is None:
        assert out == "none", (d, target, out)
    else:
        assert tuple(map(int, out.split())) == want, (d, target)


def test_small_cases():
    assert run(2) == "3 2"
    assert run(61) == "1766319049 226153980"
    assert run(49) == "none"
    for d in (3, 5, 7, 13, 46, 94, 109, 181, 277):
        expect(d, 1, run(d))


def test_large_d():
    r = random.Random(88)
    ds = [1766461, 1990981, 9999991, 4000000] + r.sample(range(10**6, 10**7), 3)
    for d in ds:
        expect(d, 1, run(d))


def test_negative_pell():
    assert run(2, -1) == "1 1"
    assert run(3, -1) == "none"
    assert run(13, -1) == "18 5"
    for d in (29, 34, 41, 61, 1000001, 9999991, 2132134, 2515273, 64):
        expect(d, -1, run(d, -1))
