import importlib.util

import pytest


def load():
    spec = importlib.util.spec_from_file_location("cache", "/app/cache.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod.LRUCache


class Clock:
    def __init__(self):
        self.t = 1000.0

    def __call__(self):
        return self.t


def test_lru_eviction_order():
    c = load()(2)
    c.put("a", 1)
    c.put("b", 2)
    assert c.get("a") == 1          # a is now most recent
    c.put("c", 3)                   # evicts b
    assert c.get("b") is None
    assert c.get("a") == 1 and c.get("c") == 3
    c.put("a", 10)                  # overwrite refreshes recency, no eviction
    c.put("d", 4)                   # evicts c
    assert c.get("c", "gone") == "gone"
    assert (c.get("a"), c.get("d")) == (10, 4)
    assert c.stats()["evictions"] == 2


def test_ttl_expiry():
    clock = Clock()
    c = load()(3, ttl=10, clock=clock)
    c.put("x", 1)
    clock.t += 5
    c.put("y", 2)
    assert c.get("x") == 1          # reads don't extend the ttl
    clock.t += 5                    # x is exactly 10s old -> expired
    assert c.get("x") is None
    assert c.get("y") == 2
    c.put("y", 3)                   # rewrite resets y's clock
    clock.t += 9
    assert c.get("y") == 3
    clock.t += 1
    assert c.get("y", -1) == -1
    assert len(c) == 0


def test_contains_len_and_stats():
    clock = Clock()
    c = load()(2, ttl=100, clock=clock)
    c.put("a", 1)
    c.put("b", 2)
    assert "a" in c                 # membership must not touch recency
    c.put("c", 3)                   # so a is still the LRU and gets evicted
    assert "a" not in c and "b" in c and "c" in c
    assert len(c) == 2
    assert c.get("b") == 2 and c.get("zzz") is None
    clock.t += 100
    assert len(c) == 0 and "b" not in c
    c.put("d", 4)
    assert c.stats() == {"hits": 1, "misses": 1, "evictions": 1}
    c2 = load()(1)
    for i in range(1000):
        c2.put(i, i)
    assert len(c2) == 1 and c2.get(999) == 999 and c2.stats()["evictions"] == 999


def test_invalid_capacity():
    with pytest.raises(ValueError):
        load()(0)
