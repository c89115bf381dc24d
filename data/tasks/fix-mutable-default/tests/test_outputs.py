import importlib.util
import random


def load():
    spec = importlib.util.spec_from_file_location("tagging", "/app/tagging.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod.add_tag


def test_calls_are_independent():
    add_tag = load()
    rng = random.Random(11)
    for _ in range(20):
        t = rng.choice(["Work", "home", "URGENT", "misc"]) + str(rng.randint(0, 9))
        assert add_tag(t) == [t.lower()]


def test_passed_list_is_extended():
    add_tag = load()
    assert add_tag("first") == ["first"]
    mine = ["x"]
    out = add_tag("Y", mine)
    assert out is mine and mine == ["x", "y"]
    assert add_tag("x", mine) == ["x", "y"]
    assert add_tag("second") == ["second"]
