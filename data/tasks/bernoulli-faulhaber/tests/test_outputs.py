from fractions import Fraction
from math import comb


def bernoulli_list(n):
    """B_0..B_n with B_1 = -1/2."""
    b = [Fraction(0)] * (n + 1)
    b[0] = Fraction(1)
    for m in range(1, n + 1):
        b[m] = -sum(comb(m + 1, k) * b[k] for k in range(m)) / (m + 1)
    return b


def power_sum(p, n):
    """sum_{k=1}^{n} k^p by Faulhaber's formula."""
    b = bernoulli_list(p)
    s = sum(comb(p + 1, j) * (-b[j] if j == 1 else b[j]) * Fraction(n) ** (p + 1 - j) for j in range(p + 1))
    return s / (p + 1)


import subprocess

TABLE = bernoulli_list(300)


def run(*args):
    p = subprocess.run(["python3", "/app/bernoulli.py", *map(str, args)], capture_output=True, text=True, timeout=60)
    assert p.returncode == 0, p.stderr
    return p.stdout.strip()


def as_fraction_text(f):
    return f"{f.numerator}/{f.denominator}"


def test_bernoulli_numbers():
    for n in (0, 1, 2, 3, 12, 27, 58, 101, 164, 300):
        assert run("bernoulli", n) == as_fraction_text(TABLE[n]), n


def test_power_sums():
    assert run("sum", 3, 10) == "3025"
    assert run("sum", 5, 0) == "0"
    assert run("sum", 0, 17) == "17"
    assert run("sum", 11, 1234) == str(sum(k ** 11 for k in range(1, 1235)))
    for p, n in ((1, 10 ** 40), (23, 987654321987654321), (64, 31415926535), (150, 10 ** 12 + 39)):
        want = power_sum(p, n)
        assert want.denominator == 1
        assert run("sum", p, n) == str(want.numerator), (p, n)
