import importlib.util
import random
import sys

import pytest


def load():
    spec = importlib.util.spec_from_file_location("semver_t", "/app/semver.py")
    mod = importlib.util.module_from_spec(spec)
    sys.modules["semver_t"] = mod
    spec.loader.exec_module(mod)
    return mod


def test_parse_and_reject():
    m = load()
    v = m.Version.parse("1.20.3-rc.1+build.7")
    assert (v.major, v.minor, v.patch, v.prerelease, v.build) == (1, 20, 3, ("rc", "1"), ("build", "7"))
    assert str(v) == "1.20.3-rc.1+build.7"
    assert m.Version.parse("0.0.0").prerelease == ()
    assert str(m.Version.parse("1.0.0-x-y.0a+001")) == "1.0.0-x-y.0a+001"
    for bad in ["1.2", "01.2.3", "1.2.3-", "1.2.3-01", "v1.2.3", " 1.2.3", "1.2.3+", "1.2.3-a..b", "1.2.3.4", "1.-2.3"]:
        with pytest.raises(ValueError):
            m.Version.parse(bad)


ORDER = ["1.0.0-0", "1.0.0-1", "1.0.0-2", "1.0.0-10", "1.0.0-alpha", "1.0.0-alpha.1", "1.0.0-alpha.beta",
         "1.0.0-beta", "1.0.0-beta.2", "1.0.0-beta.11", "1.0.0-rc.1", "1.0.0", "1.0.1", "1.2.0", "1.10.0",
         "2.0.0-Z", "2.0.0-a", "2.0.0", "10.0.0"]


def test_precedence_sort():
    m = load()
    rng = random.Random(77)
    for _ in range(20):
        shuffled = ORDER[:]
        rng.shuffle(shuffled)
        assert [str(v) for v in sorted(m.Version.parse(s) for s in shuffled)] == ORDER
    for i in range(len(ORDER) - 1):
        a, b = m.Version.parse(ORDER[i]), m.Version.parse(ORDER[i + 1])
        assert a < b and b > a and a <= b and b >= a and a != b and not (a == b)
    x, y = m.Version.parse("1.0.0+a"), m.Version.parse("1.0.0+b")
    assert x == y and hash(x) == hash(y) and len({x, y}) == 1 and x <= y and x >= y


def test_max_satisfying():
    m = load()
    vs = ["1.2.3", "1.10.0-rc.1", "1.9.9", "junk", "2.0.0-beta", "01.9.9", "1.10.0+meta"]
    assert m.max_satisfying(vs, "1.0.0") == "1.10.0+meta"
    assert m.max_satisfying(["1.2.3", "1.9.9", "2.0.0-beta"], "1.5.0") == "1.9.9"
    assert m.max_satisfying(["1.2.3", "2.0.0-beta"], "1.3.0") is None
    assert m.max_satisfying([], "0.0.0") is None
