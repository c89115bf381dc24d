import subprocess
import sys

sys.path.insert(0, "/app")


def api():
    from inventory import Item, Store
    return Item, Store


def make():
    Item, Store = api()
    s = Store()
    s.add(Item("Z-9", "zipper", 120, 10, ["textile"]))
    s.add(Item("M-5", "magnet", 305, 4))
    s.add(Item("H-4", "hinge", 799, 1, ["hardware"]))
    s.add(Item("N-1", "nail", 3, 500, ["hardware"]))
    return s


def test_independent_stores():
    Item, Store = api()
    make()
    s = Store()
    assert s.items == []
    s.add(Item("Q-1", "quill", 100))
    assert Store().items == []


def test_restock():
    s = make()
    s.restock("H-4", 5)
    s.restock("H-4", 2)
    assert s.get("H-4").quantity == 8
    assert s.total_value_cents() == 120 * 10 + 305 * 4 + 799 * 8 + 3 * 500


def test_average_price():
    Item, Store = api()
    assert make().average_price() == 3.07
    s = Store()
    s.add(Item("X", "x", 1))
    s.add(Item("Y", "y", 2))
    assert s.average_price() == 0.01 or s.average_price() == 0.02  # 1.5 cents rounds either way
    assert Store().average_price() == 0.0


def test_pagination():
    s = make()
    assert [i.name for i in s.page(1, size=3)] == ["hinge", "magnet", "nail"]
    assert [i.name for i in s.page(2, size=3)] == ["zipper"]
    assert s.page(3, size=3) == []


def test_tags():
    s = make()
    assert [i.sku for i in s.tagged("hardware")] == ["H-4", "N-1"]
    assert s.tagged("nothing") == []
    r = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests"],
                       cwd="/app", capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stdout[-2000:]
