import importlib.util
import random

import pytest


def load():
    spec = importlib.util.spec_from_file_location("intervals", "/app/intervals.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod.IntervalSet


def to_iv(s):
    out, xs = [], sorted(s)
    for x in xs:
        if out and out[-1][1] == x:
            out[-1][1] = x + 1
        else:
            out.append([x, x + 1])
    return [tuple(p) for p in out]


def test_add_remove_examples():
    S = load()
    s = S([(1, 3), (3, 5), (10, 12)])
    assert s.intervals() == [(1, 5), (10, 12)]
    s.remove(2, 11)
    assert s.intervals() == [(1, 2), (11, 12)]
    assert 1 in s and 2 not in s and 11 in s and 12 not in s and len(s) == 2
    s.add(-5, 100)
    assert s.intervals() == [(-5, 100)] and len(s) == 105


def rand_set(rng, S):
    s, ref = S(), set()
    for _ in range(rng.randint(0, 8)):
        a = rng.randint(-20, 60)
        b = a + rng.randint(1, 10)
        if rng.random() < 0.7:
            s.add(a, b)
            ref |= set(range(a, b))
        else:
            s.remove(a, b)
            ref -= set(range(a, b))
    return s, ref


def test_random_against_sets():
    S = load()
    rng = random.Random(55)
    for _ in range(300):
        s1, r1 = rand_set(rng, S)
        s2, r2 = rand_set(rng, S)
        before = s1.intervals()
        assert s1.intervals() == to_iv(r1) and len(s1) == len(r1)
        assert s1.union(s2).intervals() == to_iv(r1 | r2)
        assert s1.intersection(s2).intervals() == to_iv(r1 & r2)
        assert s1.difference(s2).intervals() == to_iv(r1 - r2)
        assert s1.intervals() == before
        x = rng.randint(-25, 75)
        assert (x in s1) == (x in r1)
        assert (s1 == s2) == (r1 == r2)


def test_gaps_and_validation():
    S = load()
    s = S([(2, 4), (6, 8)])
    assert s.gaps(0, 10) == [(0, 2), (4, 6), (8, 10)]
    assert s.gaps(3, 7) == [(4, 6)]
    assert s.gaps(2, 4) == []
    with pytest.raises(ValueError):
        S([(5, 5)])
    with pytest.raises(ValueError):
        s.add(3, 1)
