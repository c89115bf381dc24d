"""Small numeric helpers used across the lab's analysis code (plain Python floats / lists).

Every function is mathematically correct but numerically naive: they overflow, underflow or lose
most of their significant digits on inputs we see in production.
"""
import math


def logsumexp(xs):
    """log(sum(exp(x) for x in xs)) for a non-empty list of floats."""
    return math.log(sum(math.exp(x) for x in xs))


def softmax(xs):
    """[exp(x_i) / sum_j exp(x_j)] for a non-empty list of floats."""
    total = sum(math.exp(x) for x in xs)
    return [math.exp(x) / total for x in xs]


def softplus(x):
    """log(1 + exp(x))."""
    return math.log(1 + math.exp(x))


def variance(xs):
    """Population variance (divide by n) of a non-empty list of floats."""
    n = len(xs)
    mean = sum(xs) / n
    return sum(x * x for x in xs) / n - mean * mean


def quadratic_roots(a, b, c):
    """Real roots of a*x^2 + b*x + c = 0 (a != 0, b*b >= 4*a*c), as a sorted tuple (small, large)."""
    d = math.sqrt(b * b - 4 * a * c)
    r1 = (-b - d) / (2 * a)
    r2 = (-b + d) / (2 * a)
    return tuple(sorted((r1, r2)))


def log_binomial_pmf(k, n, p):
    """log of C(n, k) p^k (1-p)^(n-k) for integers 0 <= k <= n and 0 < p < 1."""
    return math.log(math.comb(n, k) * p ** k * (1 - p) ** (n - k))
