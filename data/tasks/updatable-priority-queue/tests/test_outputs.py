import importlib.util
import random

import pytest


def load():
    spec = importlib.util.spec_from_file_location("pqueue", "/app/pqueue.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod.TaskQueue()


def test_basic_order():
    q = load()
    assert not q and len(q) == 0
    for n, p in [("a", 5), ("b", 1), ("c", 5), ("d", 1), ("e", 3.5)]:
        q.push(n, p)
    assert q and len(q) == 5 and "c" in q and "z" not in q
    assert q.peek() == ("b", 1) and len(q) == 5
    assert q.pop() == ("b", 1) and q.pop() == ("d", 1)
    assert q.drain() == [("e", 3.5), ("a", 5), ("c", 5)]
    with pytest.raises(IndexError):
        q.pop()
    with pytest.raises(IndexError):
        q.peek()
    q.push("x", 0)
    with pytest.raises(KeyError):
        q.push("x", 2)


def test_update_remove():
    q = load()
    for n in "abcd":
        q.push(n, 10)
    q.update("a", 10)
    q.update("b", 20)
    q.update("b", 10)
    q.remove("c")
    assert "c" not in q and len(q) == 3
    with pytest.raises(KeyError):
        q.remove("c")
    with pytest.raises(KeyError):
        q.update("zz", 1)
    q.push("c", 10)
    assert q.drain() == [("a", 10), ("d", 10), ("b", 10), ("c", 10)]
    q.push("r", 1)
    q.remove("r")
    assert not q
    with pytest.raises(IndexError):
        q.pop()


class Ref:
    def __init__(self):
        self.items, self.t = {}, 0

    def push(self, n, p):
        self.t += 1
        self.items[n] = (p, self.t)

    def update(self, n, p):
        if self.items[n][0] != p:
            self.push(n, p)

    def pop(self):
        n = min(self.items, key=lambda k: self.items[k])
        return n, self.items.pop(n)[0]


def test_random_reference_large():
    q, ref = load(), Ref()
    rng = random.Random(17)
    names = ["t%d" % i for i in range(300)]
    ops = 0
    for _ in range(20000):
        r = rng.random()
        n = rng.choice(names)
        if r < 0.4:
            if n not in ref.items:
                p = rng.randint(0, 20)
                q.push(n, p)
                ref.push(n, p)
        elif r < 0.6:
            if n in ref.items:
                p = rng.randint(0, 20)
                q.update(n, p)
                ref.update(n, p)
        elif r < 0.7:
            if n in ref.items:
                q.remove(n)
                del ref.items[n]
        elif ref.items:
            assert q.pop() == ref.pop()
        ops += 1
        assert len(q) == len(ref.items)
    assert q.drain() == [ref.pop() for _ in range(len(ref.items))]
    big = load()
    for i in range(100000):
        big.push("j%d" % i, (i * 7919) % 1000)
    assert big.pop() == ("j0", 0) and big.pop() == ("j1000", 0)
