import importlib.util
import shutil
import sqlite3

import pytest


@pytest.fixture()
def db():
    shutil.copy("/app/notes.db", "/tmp/notes_backup.db")
    spec = importlib.util.spec_from_file_location("notes_db", "/app/notes_db.py")
    m = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(m)
    yield m
    shutil.copy("/tmp/notes_backup.db", "/app/notes.db")


def count_notes():
    c = sqlite3.connect("/app/notes.db")
    n = c.execute("SELECT COUNT(*) FROM notes").fetchone()[0]
    c.close()
    return n


def test_normal_behaviour(db):
    assert db.login("alice", "wonderland") == 1
    assert db.login("bob", "builder") == 2
    assert db.login("alice", "wrong") is None
    assert db.search_notes(1, "o") == ["Groceries", "Work todo", "100% done"]
    assert db.search_notes(1, "APPLE") == ["Apple pie"]
    assert db.search_notes(1, "", order="title") == ["100% done", "Apple pie", "Groceries", "Work todo"]
    assert db.search_notes(2, "vault") == ["Bob secret"]
    with pytest.raises(ValueError):
        db.search_notes(1, "x", order="id; DROP TABLE notes")
    nid = db.add_note(2, "It's Bob's", 'quote " and \' here')
    c = sqlite3.connect("/app/notes.db")
    assert c.execute("SELECT owner, title, body, created FROM notes WHERE id = ?", (nid,)).fetchone() == (
        2, "It's Bob's", 'quote " and \' here', 7)


def test_login_injection_blocked(db):
    assert db.login("alice", "wonderland") == 1
    for user in ["admin' --", "admin'/*", "' OR '1'='1' --", "' OR 1=1 LIMIT 1 OFFSET 2 --", "x' UNION SELECT 3 --"]:
        assert db.login(user, "anything") is None, user


def test_search_and_order_injection_blocked(db):
    assert db.search_notes(1, "Groc") == ["Groceries"]
    for term in ["' OR '1'='1", "%') OR 1=1 --", "x%' OR owner=2 OR title LIKE '%",
                 "') UNION SELECT body FROM notes --", "'; DROP TABLE notes; --"]:
        got = db.search_notes(1, term)
        assert got == [], (term, got)
    assert count_notes() == 6


def test_add_note_injection_blocked(db):
    assert db.login("bob", "builder") == 2
    before = count_notes()
    nid = db.add_note(1, "t', 'b', 99); DELETE FROM notes; --", "body")
    nid2 = db.add_note(1, "title", "x', (SELECT pw_hash FROM users WHERE id=3)); --")
    c = sqlite3.connect("/app/notes.db")
    assert count_notes() == before + 2
    assert c.execute("SELECT owner, title FROM notes WHERE id = ?", (nid,)).fetchone() == (1, "t', 'b', 99); DELETE FROM notes; --")
    assert c.execute("SELECT body FROM notes WHERE id = ?", (nid2,)).fetchone()[0] == "x', (SELECT pw_hash FROM users WHERE id=3)); --"
