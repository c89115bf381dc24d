import pytest

from inventory import Item, Store


def make():
    s = Store()
    s.add(Item("B-2", "bolt", 25, 100, ["hardware"]))
    s.add(Item("A-1", "anchor", 1999, 3, ["marine", "hardware"]))
    s.add(Item("C-3", "clamp", 450, 0))
    return s


def test_stores_are_independent():
    make()
    assert Store().items == []


def test_restock_adds():
    s = make()
    s.restock("A-1", 2)
    assert s.get("A-1").quantity == 5


def test_average_price():
    assert make().average_price() == 8.25


def test_pages_by_name():
    s = make()
    assert [i.name for i in s.page(1, size=2)] == ["anchor", "bolt"]
    assert [i.name for i in s.page(2, size=2)] == ["clamp"]


def test_tagged_handles_untagged_items():
    assert [i.sku for i in make().tagged("hardware")] == ["B-2", "A-1"]
