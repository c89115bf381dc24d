import importlib.util

import pytest


def load():
    spec = importlib.util.spec_from_file_location("events", "/app/events.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod.EventEmitter()


def test_priority_and_return_values():
    em = load()
    em.on("x", lambda v: ("a", v))
    em.on("x", lambda v: ("b", v), priority=5)
    em.on("x", lambda v: ("c", v))
    em.on("x", lambda v: ("d", v), priority=-1)
    em.on("y", lambda: "other")
    assert em.emit("x", 1) == [("b", 1), ("a", 1), ("c", 1), ("d", 1)]
    assert em.emit("nothing") == []
    assert em.listener_count("x") == 4 and em.listener_count("zzz") == 0
    h = lambda **kw: sorted(kw.items())
    em.on("k", h)
    em.on("k", h)
    assert em.emit("k", b=2, a=1) == [[("a", 1), ("b", 2)]] * 2


def test_once_and_off():
    em = load()
    log = []
    f = lambda: log.append("f") or "f"
    g = lambda: log.append("g") or "g"
    em.once("e", f, priority=1)
    em.on("e", g)
    em.on("e", f)
    assert em.emit("e") == ["f", "g", "f"]
    assert em.emit("e") == ["g", "f"]
    assert em.listener_count("e") == 2
    assert em.off("e", f) is True
    assert em.off("e", f) is False
    assert em.off("nope", g) is False
    assert em.emit("e") == ["g"]
    em.on("e", f)
    em.once("e", f)
    assert em.off("e", f) and em.listener_count("e") == 2
    assert em.emit("e") == ["g", "f"] and em.emit("e") == ["g"]


def test_snapshot_wildcard_errors():
    em = load()
    late = lambda: "late"

    def adder():
        em.on("s", late)
        em.off("s", remover_target)
        return "adder"
    remover_target = lambda: "target"
    em.on("s", adder, priority=2)
    em.on("s", remover_target)
    assert em.emit("s") == ["adder", "target"]
    assert em.emit("s") == ["adder", "late"]
    em2 = load()
    em2.on("*", lambda ev, *a, **k: ("star", ev, a, k))
    em2.on("*", lambda ev, *a, **k: "first", priority=9)
    em2.on("go", lambda n, flag=False: n * 2)
    assert em2.emit("go", 4, flag=True) == [8, "first", ("star", "go", (4,), {"flag": True})]
    assert em2.emit("idle") == ["first", ("star", "idle", (), {})]
    calls = []

    def boom():
        raise RuntimeError("boom")
    em3 = load()
    em3.once("b", boom, priority=1)
    em3.on("b", lambda: calls.append(1))
    with pytest.raises(RuntimeError):
        em3.emit("b")
    assert calls == [] and em3.listener_count("b") == 1
    em3.emit("b")
    assert calls == [1]
