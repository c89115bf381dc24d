import importlib.util
import random

import pytest


def load():
    spec = importlib.util.spec_from_file_location("buffer", "/app/buffer.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod.TextBuffer


def test_basic_undo_redo():
    B = load()
    b = B("hello world")
    b.delete(5, 6)
    b.insert(5, ", there")
    assert b.text == "hello, there"
    assert b.replace("e", "E") == 3 and b.text == "hEllo, thErE"
    assert b.replace("zz", "y") == 0
    assert b.undo() and b.text == "hello, there"
    assert b.undo() and b.text == "hello"
    assert b.redo() and b.text == "hello, there"
    b.insert(0, ">")
    assert not b.can_redo() and b.redo() is False
    assert b.undo() and b.undo() and b.undo() and b.text == "hello world"
    assert b.undo() is False and not b.can_undo() and b.can_redo()
    b.insert(0, "")
    b.delete(3, 0)
    assert b.can_redo()
    with pytest.raises(IndexError):
        b.insert(99, "x")
    with pytest.raises(IndexError):
        b.delete(5, 100)
    c = B("aaa", history_limit=2)
    for i in range(4):
        c.insert(0, "%d " % i)
    assert c.undo() and c.undo() and not c.undo()
    assert c.text == "1 0 aaa"


def test_groups_and_rollback():
    B = load()
    b = B("abc")
    with b.group():
        b.insert(3, "def")
        with b.group():
            b.delete(0, 1)
            b.replace("d", "D")
    assert b.text == "bcDef"
    assert b.undo() and b.text == "abc" and not b.can_undo()
    assert b.redo() and b.text == "bcDef"
    with b.group():
        pass
    assert b.can_redo() is False and b.undo() and b.text == "abc"
    b.insert(0, "x")
    with pytest.raises(RuntimeError):
        with b.group():
            b.insert(0, "zzz")
            b.delete(3, 2)
            raise RuntimeError("abort")
    assert b.text == "xabc"
    assert b.undo() and b.text == "abc"


def test_coalescing():
    B = load()
    b = B("")
    for i, ch in enumerate("hello"):
        b.insert(i, ch)
    b.insert(5, " ")
    for i, ch in enumerate("you"):
        b.insert(6 + i, ch)
    assert b.text == "hello you"
    assert b.undo() and b.text == "hello "
    assert b.undo() and b.text == "hello"
    assert b.undo() and b.text == ""
    b2 = B("")
    b2.insert(0, "a")
    b2.insert(1, "b")
    b2.insert(0, "c")      # not right after: new step
    b2.insert(1, "d")
    assert b2.text == "cdab"
    assert b2.undo() and b2.text == "ab"
    b2.insert(2, "x")
    b2.undo()
    b2.insert(2, "y")      # after an undo: new run
    b2.insert(3, "z")
    assert b2.undo() and b2.text == "ab"
    b3 = B("")
    b3.insert(0, "ab")     # multi-char insert is its own step
    b3.insert(2, "c")
    assert b3.undo() and b3.text == "ab"


def test_random_against_snapshots():
    B = load()
    rng = random.Random(44)
    for _ in range(30):
        b = B("start")
        snaps = ["start"]
        for _ in range(60):
            t = b.text
            r = rng.random()
            if r < 0.45:
                b.insert(rng.randint(0, len(t)), rng.choice(["ab", "XYZ", "  ", "q-q"]))
            elif r < 0.8 and t:
                p = rng.randrange(len(t))
                b.delete(p, rng.randint(1, len(t) - p))
            else:
                if b.replace(rng.choice("abXq "), rng.choice(["", "##", "Z"])) == 0:
                    continue
            if b.text != t:
                snaps.append(b.text)
            else:
                continue
        for s in reversed(snaps[:-1]):
            assert b.undo() and b.text == s
        assert not b.undo()
        for s in snaps[1:]:
            assert b.redo() and b.text == s
