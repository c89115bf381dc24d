import sqlite3

DB = "/app/webapp/shop.db"


def _c():
    return sqlite3.connect(DB)


def search_products(q):
    """Names of products whose name contains q (case-insensitive), sorted by name."""
    c = _c()
    rows = c.execute(f"SELECT name FROM products WHERE lower(name) LIKE lower('%{q}%') ORDER BY name").fetchall()
    c.close()
    return [r[0] for r in rows]


def customer_for_key(key):
    """Customer name owning API key `key`, or None."""
    c = _c()
    row = c.execute("SELECT name FROM customers WHERE api_key = ?", (key,)).fetchone()
    c.close()
    return row[0] if row else None


def get_invoice(invoice_id):
    """Invoice dict {id, customer, total} or None."""
    c = _c()
    row = c.execute("SELECT id, customer, total FROM invoices WHERE id = ?", (invoice_id,)).fetchone()
    c.close()
    return {"id": row[0], "customer": row[1], "total": row[2]} if row else None
