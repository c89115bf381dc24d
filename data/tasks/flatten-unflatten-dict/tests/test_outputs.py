import importlib.util
import random

import pytest


def load():
    spec = importlib.util.spec_from_file_location("dotted", "/app/dotted.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_flatten_examples():
    m = load()
    assert m.flatten({"a": [10, {"b": 1}]}) == {"a.0": 10, "a.1.b": 1}
    assert m.flatten({"a": {}, "b": [], "c": None, "d": {"e": {"f": True}}}) == \
        {"a": {}, "b": [], "c": None, "d.e.f": True}
    assert m.flatten({}) == {}
    assert m.flatten({"x": {"y": 1}}, sep="/") == {"x/y": 1}


def test_unflatten_lists_and_conflicts():
    m = load()
    assert m.unflatten({"a.1": "b", "a.0": "a", "k.x": 1}) == {"a": ["a", "b"], "k": {"x": 1}}
    assert m.unflatten({"a.0": 1, "a.2": 3}) == {"a": {"0": 1, "2": 3}}
    assert m.unflatten({"p/q": 5}, sep="/") == {"p": {"q": 5}}
    with pytest.raises(ValueError):
        m.unflatten({"a": 1, "a.b": 2})
    with pytest.raises(ValueError):
        m.unflatten({"a.b.c": 2, "a.b": 1})


def rand_value(rng, depth):
    r = rng.random()
    if depth > 3 or r < 0.4:
        return rng.choice([1, 2.5, "s", None, True, False, {}, [], "x.y"])
    if r < 0.7:
        return {rng.choice("abcdefgh") + rng.choice("xyz"): rand_value(rng, depth + 1) for _ in range(rng.randint(1, 4))}
    return [rand_value(rng, depth + 1) for _ in range(rng.randint(1, 12))]


def test_round_trip_random():
    m = load()
    rng = random.Random(123)
    for _ in range(200):
        d = {rng.choice("klmnop"): rand_value(rng, 0) for _ in range(rng.randint(0, 5))}
        flat = m.flatten(d)
        assert all(not isinstance(v, (dict, list)) or v in ({}, []) for v in flat.values())
        assert m.unflatten(flat) == d
    assert m.flatten({"l": list(range(12))})["l.11"] == 11
