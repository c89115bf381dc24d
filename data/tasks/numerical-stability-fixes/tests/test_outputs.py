import importlib.util
import math
from fractions import Fraction


def load():
    spec = importlib.util.spec_from_file_location("stable", "/app/stable.py")
    m = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(m)
    return m


def rel(a, b):
    return abs(a - b) / max(abs(b), 1e-300)


def test_exp_log_family():
    s = load()
    assert rel(s.logsumexp([1000.0, 1000.0]), 1000 + math.log(2)) < 1e-14
    assert rel(s.logsumexp([-1000.0, -1001.0]), -1000 + math.log1p(math.exp(-1))) < 1e-14
    assert rel(s.logsumexp([0.5]), 0.5) < 1e-15
    assert rel(s.logsumexp([710.0, -5.0, 3.0]), 710.0) < 1e-15
    p = s.softmax([1000.0, 999.0, -1e6])
    assert rel(p[0], 1 / (1 + math.exp(-1))) < 1e-13 and rel(p[1], math.exp(-1) / (1 + math.exp(-1))) < 1e-13
    assert p[2] == 0.0 and abs(sum(p) - 1) < 1e-15
    p = s.softmax([-800.0, -800.0])
    assert p == [0.5, 0.5]
    assert rel(s.softplus(800.0), 800.0) < 1e-15
    assert rel(s.softplus(-700.0), math.exp(-700.0)) < 1e-12
    assert rel(s.softplus(-40.0), math.exp(-40.0)) < 1e-12
    assert rel(s.softplus(1e-20), math.log(2)) < 1e-15
    assert rel(s.softplus(35.0), 35.0 + math.exp(-35.0)) < 1e-15


def exact_var(xs):
    fx = [Fraction(x) for x in xs]
    m = sum(fx) / len(fx)
    return float(sum((x - m) ** 2 for x in fx) / len(fx))


def test_variance():
    s = load()
    xs = [1e9 + d for d in (4.0, 7.0, 13.0, 16.0)]
    assert rel(s.variance(xs), 22.5) < 1e-12
    xs = [1e12 + 0.001 * i for i in range(1000)]
    assert rel(s.variance(xs), exact_var(xs)) < 1e-9
    xs = [1e-3 * (i % 7) - 5e7 for i in range(2000)]
    assert rel(s.variance(xs), exact_var(xs)) < 1e-9
    assert s.variance([3.0, 3.0, 3.0]) == 0.0
    assert rel(s.variance([1.0, 2.0, 3.0, 4.0]), 1.25) < 1e-15


def test_quadratic_roots():
    s = load()
    lo, hi = s.quadratic_roots(1.0, -1e8, 1.0)
    assert rel(lo, 1e-8) < 1e-12 and rel(hi, 1e8) < 1e-12
    lo, hi = s.quadratic_roots(1.0, 1e8, 1.0)
    assert rel(lo, -1e8) < 1e-12 and rel(hi, -1e-8) < 1e-12
    lo, hi = s.quadratic_roots(2.0, 0.0, -8.0)
    assert (lo, hi) == (-2.0, 2.0)
    lo, hi = s.quadratic_roots(-3.0, 6e10, 5.0)
    exact_small = -5.0 / 6e10 * (1 - 15 / 3.6e21)
    assert rel(lo, exact_small) < 1e-12 and rel(hi, 2e10) < 1e-12
    lo, hi = s.quadratic_roots(1.0, -3.0, 2.0)
    assert (lo, hi) == (1.0, 2.0)


def test_log_binomial():
    s = load()
    assert rel(s.log_binomial_pmf(3, 10, 0.5), math.log(120 / 1024)) < 1e-13
    n, k, p = 200_000, 100_123, 0.5
    want = math.lgamma(n + 1) - math.lgamma(k + 1) - math.lgamma(n - k + 1) + n * math.log(0.5)
    assert rel(s.log_binomial_pmf(k, n, p), want) < 1e-11
    want = 2000 * math.log1p(-1e-12)
    assert rel(s.log_binomial_pmf(0, 2000, 1e-12), want) < 1e-12
    n, k, p = 10**6, 10**6, 0.999999
    assert rel(s.log_binomial_pmf(k, n, p), n * math.log(p)) < 1e-12
    assert s.log_binomial_pmf(1, 1, 0.25) == math.log(0.25)
