import importlib.util
import random

import pytest


def load():
    spec = importlib.util.spec_from_file_location("ratelimit", "/app/ratelimit.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod.TokenBucketLimiter


class Clock:
    t = 500.0

    def __call__(self):
        return self.t


def test_burst_and_refill():
    L = load()
    c = Clock()
    lim = L(rate=2, capacity=5, clock=c)
    assert [lim.allow("u") for _ in range(6)] == [True] * 5 + [False]
    c.t += 0.49
    assert not lim.allow("u")
    c.t += 0.02
    assert lim.allow("u") and not lim.allow("u")
    c.t += 100
    assert lim.tokens("u") == pytest.approx(5)
    # random simulation against a reference model
    rng = random.Random(8)
    rate, cap = 1.5, 4
    c.t = 1000.0
    lim2 = L(rate, cap, clock=c)
    tok, last = float(cap), c.t
    for _ in range(300):
        c.t += rng.choice([0, 0.25, 0.5, 0.75, 1.25])
        tok = min(cap, tok + (c.t - last) * rate)
        last = c.t
        ok = tok >= 1
        if ok:
            tok -= 1
        assert lim2.allow("k") == ok


def test_keys_independent_and_cost():
    L = load()
    c = Clock()
    lim = L(1, 3, clock=c)
    assert lim.allow("a", cost=3) and not lim.allow("a")
    assert lim.tokens("b") == pytest.approx(3) and lim.allow(("tuple", 1), cost=2)
    c.t += 1
    assert not lim.allow("a", cost=2)
    assert lim.tokens("a") == pytest.approx(1)
    assert lim.allow("a", cost=1)
    with pytest.raises(ValueError):
        lim.allow("a", cost=4)


def test_retry_after_and_validation():
    L = load()
    c = Clock()
    lim = L(0.5, 2, clock=c)
    assert lim.retry_after("x") == 0.0
    lim.allow("x", 2)
    assert lim.retry_after("x") == pytest.approx(2.0)
    assert lim.retry_after("x", cost=2) == pytest.approx(4.0)
    c.t += 2.0
    assert lim.retry_after("x") == pytest.approx(0.0) and lim.allow("x")
    for bad in [(0, 1), (-1, 1), (1, 0)]:
        with pytest.raises(ValueError):
            L(*bad, clock=c)
