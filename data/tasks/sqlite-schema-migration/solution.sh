#!/bin/bash
set -e
python3 - <<'PY'
import sqlite3
db = sqlite3.connect("/app/app.db")
db.executescript("""
BEGIN;
ALTER TABLE users RENAME COLUMN fullname TO display_name;
ALTER TABLE users ADD COLUMN active INTEGER NOT NULL DEFAULT 1;
CREATE TABLE tags (id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE);
CREATE TABLE user_tags (user_id INTEGER NOT NULL REFERENCES users(id) ON DELETE CASCADE,
                        tag_id INTEGER NOT NULL REFERENCES tags(id), PRIMARY KEY (user_id, tag_id));
COMMIT;
""")
for uid, tags in db.execute("SELECT id, tags FROM users").fetchall():
    for name in {t.strip() for t in tags.split(",") if t.strip()}:
        db.execute("INSERT OR IGNORE INTO tags(name) VALUES (?)", (name,))
        tid = db.execute("SELECT id FROM tags WHERE name = ?", (name,)).fetchone()[0]
        db.execute("INSERT INTO user_tags VALUES (?, ?)", (uid, tid))
db.commit()
db.executescript("ALTER TABLE users DROP COLUMN tags; CREATE UNIQUE INDEX idx_users_email ON users(email); PRAGMA user_version = 2;")
db.commit()
PY
