import importlib.util
import random

import pytest


def load():
    spec = importlib.util.spec_from_file_location("trie", "/app/trie.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod.Autocomplete()


def test_complete_order():
    t = load()
    for w, k in [("car", 5), ("cart", 5), ("care", 9), ("cat", 1), ("dog", 7), ("ca", 2), ("Car", 100)]:
        t.add(w, k)
    t.add("cat", 3)
    assert t.complete("ca") == ["care", "car", "cart", "cat", "ca"]
    assert t.complete("ca", limit=2) == ["care", "car"]
    assert t.complete("car") == ["care", "car", "cart"]
    assert t.complete("") == ["Car", "care", "dog", "car", "cart", "cat", "ca"]
    assert t.complete("x") == [] and t.complete("cartwheel") == []
    assert t.weight("cat") == 4
    with pytest.raises(ValueError):
        t.add("")


def test_remove_and_counts():
    t = load()
    for w in ["a", "ab", "abc", "abd", "b"]:
        t.add(w)
    assert len(t) == 5 and t.count_prefix("ab") == 3 and t.count_prefix("") == 5
    assert t.remove("ab") is True and t.remove("ab") is False and t.remove("zz") is False
    assert "ab" not in t and "abc" in t and "a" in t and len(t) == 4
    assert t.count_prefix("ab") == 2 and t.complete("ab") == ["abc", "abd"]
    assert t.remove("abc") and t.remove("abd")
    assert t.count_prefix("ab") == 0 and t.complete("a") == ["a"]
    with pytest.raises(KeyError):
        t.weight("abc")
    t.add("abc", 2)
    assert t.weight("abc") == 2 and t.count_prefix("a") == 2


def test_random_reference():
    t = load()
    rng = random.Random(5)
    ref = {}
    for _ in range(12000):
        w = "".join(rng.choice("abcde") for _ in range(rng.randint(1, 7)))
        if rng.random() < 0.8:
            k = rng.randint(1, 50)
            t.add(w, k)
            ref[w] = ref.get(w, 0) + k
        else:
            assert t.remove(w) == (w in ref)
            ref.pop(w, None)
    assert len(t) == len(ref)
    for _ in range(100):
        p = "".join(rng.choice("abcde") for _ in range(rng.randint(0, 3)))
        want = sorted((w for w in ref if w.startswith(p)), key=lambda w: (-ref[w], w))
        assert t.complete(p, limit=7) == want[:7], p
        assert t.count_prefix(p) == len(want)
