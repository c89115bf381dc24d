import csv
from pathlib import Path

CATEGORIES = [('audio', 48, 924087), ('kitchen', 39, 871428), ('toys', 44, 800845), ('books', 44, 756833), ('garden', 46, 604307)]  # (category, orders, revenue in cents)
TOP = [('user14@mail.example', 309918), ('user15@mail.example', 300259), ('user17@mail.example', 258332)]  # (email, revenue in cents)


def load(path):
    rows = [[c.strip() for c in r] for r in csv.reader(Path(path).read_text().splitlines()) if r]
    return rows[0], rows[1:]


def test_category_orders():
    header, body = load("/app/category_revenue.csv")
    assert header == ["category", "orders", "revenue"]
    assert [(r[0], int(r[1])) for r in body] == [(c, n) for c, n, _ in CATEGORIES]


def test_category_revenue():
    header, body = load("/app/category_revenue.csv")
    assert header == ["category", "orders", "revenue"]
    assert len(body) == len(CATEGORIES)
    for row, (cat, _, cents) in zip(body, CATEGORIES):
        assert row[0] == cat
        assert row[2] == f"{cents // 100}.{cents % 100:02d}", (row, cents)


def test_top_customers():
    header, body = load("/app/top_customers.csv")
    assert header == ["email", "revenue"]
    assert [(r[0], r[1]) for r in body] == [(e, f"{c // 100}.{c % 100:02d}") for e, c in TOP]
