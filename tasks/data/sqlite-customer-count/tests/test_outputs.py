import sqlite3


def test_answer():
    db = sqlite3.connect("/app/shop.db")
    assert db.execute("SELECT COUNT(*) FROM orders").fetchone()[0] > 100
    rows = db.execute("SELECT c.id, c.country, o.ordered_at FROM customers c JOIN orders o ON o.customer_id = c.id").fetchall()
    want = len({cid for cid, country, at in rows if country == "Germany" and at.startswith("2023")})
    assert want > 5
    assert open("/app/answer.txt").read().strip() == str(want)
