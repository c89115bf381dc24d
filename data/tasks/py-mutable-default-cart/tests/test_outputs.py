import importlib.util


def load():
    spec = importlib.util.spec_from_file_location("cart", "/app/cart.py")
    m = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(m)
    return m


def test_fresh_carts():
    m = load()
    a = m.add_item("apple", 2)
    b = m.add_item("pear", 1)
    assert [list(x) for x in a] == [["apple", 2]]
    assert [list(x) for x in b] == [["pear", 1]]
    assert a is not b
    c = m.add_item("apple", 5)
    assert m.total(c, {"apple": 3}) == 15


def test_existing_cart():
    m = load()
    m.add_item("x", 1)
    mine = []
    r = m.add_item("kiwi", 2, mine)
    assert r is mine
    m.add_item("plum", 1, mine)
    m.add_item("kiwi", 3, mine)
    assert sorted(tuple(x) for x in mine) == [("kiwi", 5), ("plum", 1)]
    assert m.total(mine, {"kiwi": 2, "plum": 10}) == 20
    assert [list(x) for x in m.add_item("fig", 4)] == [["fig", 4]]
