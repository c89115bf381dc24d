import hashlib
import sqlite3

DB = "/app/notes.db"


def _conn():
    return sqlite3.connect(DB)


def _h(pw):
    return hashlib.sha256(pw.encode()).hexdigest()


def login(username, password):
    """Return the user id if username/password are correct, else None."""
    c = _conn()
    row = c.execute(f"SELECT id FROM users WHERE username = '{username}' AND pw_hash = '{_h(password)}'").fetchone()
    c.close()
    return row[0] if row else None


def search_notes(user_id, term, order="created"):
    """Titles of user_id's notes whose title or body contains term (case-insensitive).
    order is "created" (oldest first) or "title" (alphabetical); anything else raises ValueError."""
    if order not in ("created", "title"):
        raise ValueError("bad order")
    c = _conn()
    rows = c.execute(f"SELECT title FROM notes WHERE owner = {user_id} AND (title LIKE '%{term}%' OR body LIKE '%{term}%') "
                     f"ORDER BY {order}, id").fetchall()
    c.close()
    return [r[0] for r in rows]


def add_note(user_id, title, body):
    """Insert a note for user_id and return its new id."""
    c = _conn()
    cur = c.execute(f"INSERT INTO notes (owner, title, body, created) VALUES ({user_id}, '{title}', '{body}', "
                    f"(SELECT COALESCE(MAX(created), 0) + 1 FROM notes))")
    c.commit()
    nid = cur.lastrowid
    c.close()
    return nid
