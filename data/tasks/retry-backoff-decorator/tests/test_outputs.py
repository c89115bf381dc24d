import importlib.util
import random

import pytest


def load():
    spec = importlib.util.spec_from_file_location("retry", "/app/retry.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod.retry


class Flaky:
    def __init__(self, failures, exc=OSError):
        self.failures, self.exc, self.calls = failures, exc, 0

    def __call__(self, x, y=0):
        self.calls += 1
        if self.calls <= self.failures:
            raise self.exc("fail %d" % self.calls)
        return x + y


def test_success_after_failures():
    retry = load()
    rng = random.Random(17)
    for _ in range(10):
        fails = rng.randint(0, 4)
        base, factor = rng.choice([0.5, 1, 0.25]), rng.choice([2, 3, 1.5])
        slept = []
        f = Flaky(fails)
        g = retry(attempts=5, base_delay=base, factor=factor, sleep=slept.append)(f)
        assert g(3, y=4) == 7
        assert f.calls == fails + 1
        assert slept == pytest.approx([base * factor ** k for k in range(fails)])


def test_exhaustion_and_cap():
    retry = load()
    slept = []
    f = Flaky(100, ValueError)
    g = retry(attempts=4, base_delay=1, factor=10, max_delay=25, exceptions=(ValueError, KeyError), sleep=slept.append)(f)
    with pytest.raises(ValueError) as ei:
        g(1)
    assert str(ei.value) == "fail 4"
    assert f.calls == 4 and slept == [1, 10, 25]
    slept.clear()
    one = Flaky(100)
    with pytest.raises(OSError):
        retry(attempts=1, sleep=slept.append)(one)(0)
    assert one.calls == 1 and slept == []
    with pytest.raises(ValueError):
        retry(attempts=0)


def test_unlisted_exception_and_metadata():
    retry = load()
    slept = []
    f = Flaky(3, TypeError)
    g = retry(attempts=5, exceptions=(OSError,), sleep=slept.append)(f)
    with pytest.raises(TypeError):
        g(1)
    assert f.calls == 1 and slept == []

    @retry(attempts=2, sleep=slept.append)
    def documented(a, *, b):
        """Adds things."""
        return a * b
    assert documented.__name__ == "documented" and documented.__doc__ == "Adds things."
    assert documented(6, b=7) == 42
