python3 - <<'PY'
import random, sqlite3
random.seed(7)
db = sqlite3.connect("/app/shop.db")
db.executescript("""
CREATE TABLE customers (id INTEGER PRIMARY KEY, name TEXT NOT NULL, country TEXT NOT NULL);
CREATE TABLE orders (id INTEGER PRIMARY KEY, customer_id INTEGER NOT NULL REFERENCES customers(id),
                     ordered_at TEXT NOT NULL, total_cents INTEGER NOT NULL);
""")
countries = ["Germany", "France", "Spain", "Germany", "Italy", "Austria"]
for i in range(1, 121):
    db.execute("INSERT INTO customers VALUES (?,?,?)", (i, f"Customer {i}", random.choice(countries)))
oid = 0
for cid in range(1, 121):
    for _ in range(random.randint(0, 4)):
        oid += 1
        y = random.choice([2022, 2023, 2023, 2024])
        d = f"{y}-{random.randint(1,12):02d}-{random.randint(1,28):02d} {random.randint(0,23):02d}:00:00"
        db.execute("INSERT INTO orders VALUES (?,?,?,?)", (oid, cid, d, random.randint(500, 90000)))
db.commit()
PY
