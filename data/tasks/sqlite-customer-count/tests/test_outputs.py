import random
import sqlite3


def generated():
    """The customers and orders setup.sh wrote (same seed and calls), to check the database was not modified."""
    random.seed(7)
    countries = ["Germany", "France", "Spain", "Germany", "Italy", "Austria"]
    customers = [(i, f"Customer {i}", random.choice(countries)) for i in range(1, 121)]
    orders, oid = [], 0
    for cid in range(1, 121):
        for _ in range(random.randint(0, 4)):
            oid += 1
            y = random.choice([2022, 2023, 2023, 2024])
            d = f"{y}-{random.randint(1,12):02d}-{random.randint(1,28):02d} {random.randint(0,23):02d}:00:00"
            orders.append((oid, cid, d, random.randint(500, 90000)))
    return customers, orders


def test_answer():
    customers, orders = generated()
    db = sqlite3.connect("/app/shop.db")
    assert db.execute("SELECT * FROM customers ORDER BY id").fetchall() == customers
    assert db.execute("SELECT * FROM orders ORDER BY id").fetchall() == orders
    country = {cid: c for cid, _, c in customers}
    want = len({cid for _, cid, at, _ in orders if country[cid] == "Germany" and at.startswith("2023")})
    assert want > 5
    assert open("/app/answer.txt").read().strip() == str(want)
