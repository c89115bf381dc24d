import bisect
import hashlib
import importlib.util
import random

import pytest


def load():
    spec = importlib.util.spec_from_file_location("hashring", "/app/hashring.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod.HashRing


def h(s):
    return int.from_bytes(hashlib.md5(s.encode("utf-8")).digest()[:8], "big")


class Ref:
    def __init__(self, nodes, replicas):
        self.points = sorted((h("%s#%d" % (n, i)), n) for n in nodes for i in range(replicas))

    def walk(self, key):
        i = bisect.bisect_left(self.points, (h(key), ""))
        return [self.points[(i + k) % len(self.points)][1] for k in range(len(self.points))]

    def get_nodes(self, key, n):
        out = []
        for name in self.walk(key):
            if name not in out:
                out.append(name)
        return out[:n]


def test_get_node_reference():
    R = load()
    rng = random.Random(91)
    nodes = ["cache-%d" % i for i in rng.sample(range(100), 7)]
    ring = R(replicas=50)
    for n in nodes:
        ring.add_node(n)
    ref = Ref(nodes, 50)
    for _ in range(2000):
        key = "user:%d" % rng.randint(0, 10**9)
        assert ring.get_node(key) == ref.walk(key)[0], key
    assert ring.nodes() == sorted(nodes)
    single = R(replicas=1)
    single.add_node("only")
    assert single.get_node("anything") == "only"


def test_get_nodes_and_removal():
    R = load()
    rng = random.Random(92)
    nodes = ["n%d" % i for i in range(6)]
    ring = R(replicas=20)
    for n in nodes:
        ring.add_node(n)
    for _ in range(300):
        key = "k%d" % rng.randint(0, 10**6)
        k = rng.randint(1, 8)
        assert ring.get_nodes(key, k) == Ref(nodes, 20).get_nodes(key, k)
    before = {("k%d" % i): ring.get_node("k%d" % i) for i in range(1000)}
    ring.remove_node("n3")
    ref = Ref([n for n in nodes if n != "n3"], 20)
    for key, owner in before.items():
        now = ring.get_node(key)
        assert now == ref.walk(key)[0]
        if owner != "n3":
            assert now == owner
    assert ring.nodes() == ["n0", "n1", "n2", "n4", "n5"]


def test_errors():
    R = load()
    with pytest.raises(ValueError):
        R(replicas=0)
    ring = R(replicas=3)
    with pytest.raises(LookupError):
        ring.get_node("x")
    ring.add_node("a")
    with pytest.raises(ValueError):
        ring.add_node("a")
    with pytest.raises(KeyError):
        ring.remove_node("b")
    ring.remove_node("a")
    with pytest.raises(LookupError):
        ring.get_node("x")
