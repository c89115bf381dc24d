#!/bin/bash
set -e
cat > /app/stable.py <<'PY'
"""Small numeric helpers used across the lab's analysis code (plain Python floats / lists)."""
import math


def logsumexp(xs):
    """log(sum(exp(x) for x in xs)) for a non-empty list of floats."""
    m = max(xs)
    if math.isinf(m):
        return m
    return m + math.log(math.fsum(math.exp(x - m) for x in xs))


def softmax(xs):
    """[exp(x_i) / sum_j exp(x_j)] for a non-empty list of floats."""
    m = max(xs)
    es = [math.exp(x - m) for x in xs]
    total = math.fsum(es)
    return [e / total for e in es]


def softplus(x):
    """log(1 + exp(x))."""
    if x > 0:
        return x + math.log1p(math.exp(-x))
    return math.log1p(math.exp(x))


def variance(xs):
    """Population variance (divide by n) of a non-empty list of floats."""
    n = len(xs)
    mean = math.fsum(xs) / n
    dev = [x - mean for x in xs]
    corr = math.fsum(dev) / n
    return math.fsum((d - corr) ** 2 for d in dev) / n


def quadratic_roots(a, b, c):
    """Real roots of a*x^2 + b*x + c = 0 (a != 0, b*b >= 4*a*c), as a sorted tuple (small, large)."""
    d = math.sqrt(max(b * b - 4 * a * c, 0.0))
    if b == 0:
        r = d / (2 * a)
        return tuple(sorted((-r, r)))
    q = -0.5 * (b + math.copysign(d, b))
    r1 = q / a
    r2 = c / q if q != 0 else r1
    return tuple(sorted((r1, r2)))


def log_binomial_pmf(k, n, p):
    """log of C(n, k) p^k (1-p)^(n-k) for integers 0 <= k <= n and 0 < p < 1."""
    lc = math.lgamma(n + 1) - math.lgamma(k + 1) - math.lgamma(n - k + 1)
    return lc + (k * math.log(p) if k else 0.0) + ((n - k) * math.log1p(-p) if n - k else 0.0)
PY
