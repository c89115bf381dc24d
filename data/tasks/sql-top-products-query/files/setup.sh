python3 - <<'PY'
import random, sqlite3
random.seed(21)
db = sqlite3.connect("/app/sales.db")
db.executescript(open("/app/schema.sql").read())
cats = ["tools", "garden", "kitchen", "toys"]
for i in range(1, 41):
    db.execute("INSERT INTO products VALUES (?,?,?)", (i, f"Product {i:02d}", random.choice(cats)))
for i in range(1, 901):
    db.execute("INSERT INTO sales VALUES (?,?,?,?,?,?)", (i, random.randint(1, 40), f"2024-{random.randint(1,12):02d}-{random.randint(1,28):02d}",
               random.randint(1, 9), random.randint(100, 5000), int(random.random() < 0.1)))
db.commit()
PY
