import json
import sqlite3
from pathlib import Path

import pytest


def fresh():
    db = sqlite3.connect(":memory:", isolation_level=None)
    db.executescript(Path("/app/schema.sql").read_text())
    db.executescript(Path("/app/triggers.sql").read_text())
    return db


def log(db):
    rows = db.execute("SELECT table_name, row_id, action, old_values, new_values FROM audit_log ORDER BY id").fetchall()
    return [(t, r, a, json.loads(o) if o else None, json.loads(n) if n else None) for t, r, a, o, n in rows]


def test_insert_and_delete_audit():
    db = fresh()
    db.execute("INSERT INTO accounts (owner, balance) VALUES ('ann', 100)")
    db.execute("INSERT INTO accounts (id, owner, balance, currency) VALUES (7, 'bob', 0, 'USD')")
    db.execute("DELETE FROM accounts WHERE owner = 'ann'")
    db.execute("INSERT INTO accounts (owner, balance) VALUES ('cy', 5), ('di', 6)")
    assert log(db) == [
        ("accounts", 1, "INSERT", None, {"id": 1, "owner": "ann", "balance": 100, "currency": "EUR"}),
        ("accounts", 7, "INSERT", None, {"id": 7, "owner": "bob", "balance": 0, "currency": "USD"}),
        ("accounts", 1, "DELETE", {"id": 1, "owner": "ann", "balance": 100, "currency": "EUR"}, None),
        ("accounts", 8, "INSERT", None, {"id": 8, "owner": "cy", "balance": 5, "currency": "EUR"}),
        ("accounts", 9, "INSERT", None, {"id": 9, "owner": "di", "balance": 6, "currency": "EUR"}),
    ]


def test_update_changed_columns_only():
    db = fresh()
    db.execute("INSERT INTO accounts (owner, balance) VALUES ('ann', 100), ('bob', 50)")
    db.execute("UPDATE accounts SET balance = balance + 25 WHERE owner = 'ann'")
    db.execute("UPDATE accounts SET balance = balance, owner = owner")
    db.execute("UPDATE accounts SET owner = 'Bob', currency = 'GBP', balance = 50 WHERE id = 2")
    db.execute("UPDATE accounts SET id = 20 WHERE id = 2")
    db.execute("UPDATE accounts SET balance = 0")
    got = log(db)[2:]
    assert got == [
        ("accounts", 1, "UPDATE", {"balance": 100}, {"balance": 125}),
        ("accounts", 2, "UPDATE", {"owner": "bob", "currency": "EUR"}, {"owner": "Bob", "currency": "GBP"}),
        ("accounts", 20, "UPDATE", {"id": 2}, {"id": 20}),
        ("accounts", 1, "UPDATE", {"balance": 125}, {"balance": 0}),
        ("accounts", 20, "UPDATE", {"balance": 50}, {"balance": 0}),
    ]


def test_constraints():
    db = fresh()
    db.execute("INSERT INTO accounts (owner, balance) VALUES ('ann', 10)")
    with pytest.raises(sqlite3.IntegrityError, match="insufficient funds"):
        db.execute("INSERT INTO accounts (owner, balance) VALUES ('neg', -1)")
    with pytest.raises(sqlite3.IntegrityError, match="insufficient funds"):
        db.execute("UPDATE accounts SET balance = balance - 11")
    assert db.execute("SELECT balance FROM accounts").fetchall() == [(10,)]
    assert len(log(db)) == 1
    for stmt in ("UPDATE audit_log SET action = 'DELETE'", "DELETE FROM audit_log"):
        with pytest.raises(sqlite3.IntegrityError, match="audit log is append-only"):
            db.execute(stmt)
    assert log(db) == [("accounts", 1, "INSERT", None, {"id": 1, "owner": "ann", "balance": 10, "currency": "EUR"})]
    db.execute("UPDATE accounts SET balance = 0")
    assert len(log(db)) == 2
