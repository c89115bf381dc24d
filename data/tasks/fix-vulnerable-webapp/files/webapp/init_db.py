import sqlite3
c = sqlite3.connect("/app/webapp/shop.db")
c.executescript("""
CREATE TABLE products (id INTEGER PRIMARY KEY, name TEXT, secret_cost INTEGER);
CREATE TABLE customers (name TEXT PRIMARY KEY, api_key TEXT);
CREATE TABLE invoices (id INTEGER PRIMARY KEY, customer TEXT, total INTEGER);
""")
c.executemany("INSERT INTO products (name, secret_cost) VALUES (?, ?)",
              [("Blue Mug", 120), ("Red Mug", 130), ("Teapot", 900), ("Mug Warmer", 1500), ("Tea Towel", 80)])
c.executemany("INSERT INTO customers VALUES (?, ?)", [("alice", "key-alice-7f3a"), ("bob", "key-bob-19c2")])
c.executemany("INSERT INTO invoices VALUES (?, ?, ?)", [(1, "alice", 2500), (2, "bob", 990), (3, "alice", 120), (4, "bob", 4500)])
c.commit()
