import copy
import importlib.util
import json
import random

import pytest


def load():
    spec = importlib.util.spec_from_file_location("orderflow", "/app/orderflow.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


GUARDS = {
    "has_items": lambda c, p: bool(c.get("items")),
    "amount_matches": lambda c, p: p is not None and p.get("amount") == sum(i["price"] for i in c["items"]),
    "has_address": lambda c, p: bool(c.get("address")),
}


def machine(m):
    return m.Machine.load("/app/workflow.json", GUARDS)


def test_happy_path_and_history():
    m = load()
    inst = machine(m).start({"items": [{"price": 5}, {"price": 7}], "address": "1 Road"})
    assert inst.state == "draft" and not inst.is_final
    assert inst.available() == ["cancel", "edit", "submit"]
    assert inst.fire("submit") == "pending"
    assert inst.fire("pay", {"amount": 12}) == "paid"
    assert inst.available() == ["cancel", "ship"]
    inst.fire("ship")
    inst.fire("deliver")
    assert inst.state == "delivered" and inst.is_final and inst.available() == []
    assert [(h["event"], h["from"], h["to"]) for h in inst.history] == [
        ("submit", "draft", "pending"), ("pay", "pending", "paid"), ("ship", "paid", "shipped"), ("deliver", "shipped", "delivered")]
    assert inst.history[1]["payload"] == {"amount": 12} and inst.history[0]["payload"] is None
    other = machine(m).start({"items": [{"price": 1}]})
    other.fire("submit")
    other.fire("edit")
    assert other.state == "draft" and inst.state == "delivered"


def test_invalid_and_guards():
    m = load()
    inst = machine(m).start({"items": []})
    with pytest.raises(m.GuardFailed):
        inst.fire("submit")
    assert inst.state == "draft" and inst.history == []
    inst.context["items"].append({"price": 3})
    inst.fire("submit")
    with pytest.raises(m.GuardFailed):
        inst.fire("pay", {"amount": 4})
    with pytest.raises(m.InvalidTransition) as ei:
        inst.fire("deliver")
    assert not isinstance(ei.value, m.GuardFailed)
    with pytest.raises(m.InvalidTransition):
        inst.fire("teleport")
    inst.fire("pay", {"amount": 3})
    assert inst.fire("cancel") == "refunded" and inst.is_final
    with pytest.raises(m.InvalidTransition):
        inst.fire("cancel")
    assert len(inst.history) == 3
    assert issubclass(m.GuardFailed, m.InvalidTransition)


def test_definition_validation():
    m = load()
    base = json.load(open("/app/workflow.json"))
    m.Machine(copy.deepcopy(base), GUARDS)
    bad1 = copy.deepcopy(base)
    bad1["transitions"].append({"event": "submit", "from": ["draft"], "to": "paid"})
    bad2 = copy.deepcopy(base)
    bad3 = copy.deepcopy(base)
    bad3["initial"] = "limbo"
    bad4 = copy.deepcopy(base)
    bad4["transitions"].append({"event": "reopen", "from": ["delivered"], "to": "draft"})
    for d, g in [(bad1, GUARDS), (bad2, {k: v for k, v in GUARDS.items() if k != "has_address"}), (bad3, GUARDS), (bad4, GUARDS)]:
        with pytest.raises(ValueError):
            m.Machine(d, g)
    tiny = m.Machine({"initial": "off", "final": [], "transitions": [{"event": "toggle", "from": ["off"], "to": "on"},
                                                                      {"event": "toggle", "from": ["on"], "to": "off"}]})
    i = tiny.start()
    assert i.context == {} and [i.fire("toggle") for _ in range(3)] == ["on", "off", "on"]


def test_serialization_round_trip():
    m = load()
    mach = machine(m)
    rng = random.Random(4)
    for _ in range(30):
        prices = [rng.randint(1, 50) for _ in range(rng.randint(1, 4))]
        inst = mach.start({"items": [{"price": p} for p in prices], "address": "x"})
        for _ in range(rng.randint(0, 3)):
            ev = rng.choice(inst.available() or ["noop"])
            try:
                inst.fire(ev, {"amount": sum(prices)})
            except m.InvalidTransition:
                pass
        text = inst.to_json()
        assert isinstance(text, str)
        back = mach.restore(text)
        assert back.state == inst.state and back.context == inst.context and back.history == inst.history
        if back.state == "pending":
            back.fire("pay", {"amount": sum(prices)})
            assert back.state == "paid" and len(back.history) == len(inst.history) + 1
