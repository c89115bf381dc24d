CREATE TABLE products (id INTEGER PRIMARY KEY, name TEXT NOT NULL, category TEXT NOT NULL);
CREATE TABLE sales (id INTEGER PRIMARY KEY, product_id INTEGER NOT NULL REFERENCES products(id),
                    sold_on TEXT NOT NULL, qty INTEGER NOT NULL, unit_price_cents INTEGER NOT NULL,
                    refunded INTEGER NOT NULL DEFAULT 0);
