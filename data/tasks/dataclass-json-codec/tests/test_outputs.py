import dataclasses
import datetime
import enum
import importlib.util
import json
import random
import sys
from decimal import Decimal
from typing import Optional

import pytest


def load():
    spec = importlib.util.spec_from_file_location("codec", "/app/codec.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


class Status(enum.Enum):
    NEW = "new"
    PAID = "paid"


class Level(enum.Enum):
    LOW = 1
    HIGH = 2


@dataclasses.dataclass
class Address:
    street: str
    zip: Optional[str] = None


@dataclasses.dataclass
class Item:
    sku: str
    qty: int
    price: Decimal
    weight: float = 0.0


@dataclasses.dataclass
class Order:
    id: int
    status: Status
    items: list[Item]
    placed: datetime.datetime
    ship_by: datetime.date
    prices: dict[str, Decimal] = dataclasses.field(default_factory=dict)
    address: "Address | None" = None
    tags: tuple[str, ...] = ()
    level: Level = Level.LOW
    gift: bool = False
    parent: "Optional[Order]" = None


def sample(rng):
    items = [Item("S%d" % rng.randint(0, 99), rng.randint(1, 9), Decimal("%d.%02d" % (rng.randint(0, 99), rng.randint(0, 99))),
                  rng.choice([0.0, 1.5, 2.25])) for _ in range(rng.randint(0, 3))]
    o = Order(rng.randint(1, 10**6), rng.choice(list(Status)), items,
              datetime.datetime(2025, rng.randint(1, 12), rng.randint(1, 28), rng.randint(0, 23), rng.randint(0, 59)),
              datetime.date(2025, rng.randint(1, 12), rng.randint(1, 28)),
              {k: Decimal(rng.randint(1, 500)) / 100 for k in rng.sample(["apple", "pear", "fig"], rng.randint(0, 3))},
              rng.choice([None, Address("Main St %d" % rng.randint(1, 99)), Address("Elm", "12345")]),
              tuple(rng.sample(["a", "b", "c"], rng.randint(0, 3))), rng.choice(list(Level)), rng.random() < 0.5)
    if rng.random() < 0.3:
        o.parent = Order(1, Status.NEW, [], o.placed, o.ship_by)
    return o


def test_encode_exact():
    m = load()
    o = Order(7, Status.PAID, [Item("A1", 2, Decimal("9.90"), 1.5)], datetime.datetime(2025, 3, 4, 5, 6, 7),
              datetime.date(2025, 3, 9), {"apple": Decimal("0.50")}, Address("Main"), ("x",), Level.HIGH, True)
    text = m.to_json(o)
    assert text == json.dumps({"id": 7, "status": "paid", "items": [{"sku": "A1", "qty": 2, "price": "9.90", "weight": 1.5}],
                               "placed": "2025-03-04T05:06:07", "ship_by": "2025-03-09", "prices": {"apple": "0.50"},
                               "address": {"street": "Main", "zip": None}, "tags": ["x"], "level": 2, "gift": True,
                               "parent": None}, sort_keys=True)
    with pytest.raises(TypeError):
        m.to_json(Address(street=object()))


def test_round_trip():
    m = load()
    rng = random.Random(12)
    for _ in range(100):
        o = sample(rng)
        back = m.from_json(Order, m.to_json(o))
        assert back == o
        assert isinstance(back.tags, tuple) and all(isinstance(i.price, Decimal) for i in back.items)
        assert type(back.placed) is datetime.datetime and type(back.ship_by) is datetime.date


def base():
    return json.loads(load().to_json(Order(1, Status.NEW, [Item("A", 1, Decimal("1")), Item("B", 2, Decimal("2"))],
                                           datetime.datetime(2025, 1, 1), datetime.date(2025, 1, 2),
                                           {"apple": Decimal("1")}, Address("x"))))


def error_path(m, doc):
    with pytest.raises(m.CodecError) as ei:
        m.from_json(Order, json.dumps(doc))
    assert isinstance(ei.value, ValueError)
    return str(ei.value)


def test_type_errors_with_paths():
    m = load()
    cases = [
        (lambda d: d.__setitem__("id", "1"), "id"),
        (lambda d: d.__setitem__("id", True), "id"),
        (lambda d: d.__setitem__("id", 1.5), "id"),
        (lambda d: d["items"][1].__setitem__("qty", "2"), "items[1].qty"),
        (lambda d: d["items"][0].__setitem__("weight", "heavy"), "items[0].weight"),
        (lambda d: d["items"][1].__setitem__("price", 3), "items[1].price"),
        (lambda d: d.__setitem__("status", "lost"), "status"),
        (lambda d: d["prices"].__setitem__("apple", 5), "prices[apple]"),
        (lambda d: d["address"].__setitem__("street", None), "address.street"),
        (lambda d: d.__setitem__("gift", 1), "gift"),
        (lambda d: d.__setitem__("placed", "yesterday"), "placed"),
        (lambda d: d.__setitem__("tags", ["ok", 3]), "tags[1]"),
        (lambda d: d.__setitem__("items", None), "items"),
    ]
    for mutate, path in cases:
        d = base()
        mutate(d)
        msg = error_path(m, d)
        assert path in msg, (path, msg)
        if "." in path or "[" in path:
            assert "." + path not in msg
    d = base()
    d["items"][0]["weight"] = 3
    o = m.from_json(Order, json.dumps(d))
    assert o.items[0].weight == 3.0 and isinstance(o.items[0].weight, float)


def test_defaults_and_unknown():
    m = load()
    d = {"id": 5, "status": "new", "items": [], "placed": "2025-02-03T04:05:06", "ship_by": "2025-02-04"}
    o = m.from_json(Order, json.dumps(d))
    assert o.prices == {} and o.address is None and o.tags == () and o.level is Level.LOW and o.gift is False
    a = m.from_json(Order, json.dumps(d))
    assert a.prices is not o.prices
    d2 = dict(d, extra=1)
    assert "extra" in error_path(m, d2)
    d3 = dict(d)
    del d3["ship_by"]
    assert "ship_by" in error_path(m, d3)
    d4 = dict(d, items=[{"sku": "x", "qty": 1}])
    assert "items[0].price" in error_path(m, d4)
