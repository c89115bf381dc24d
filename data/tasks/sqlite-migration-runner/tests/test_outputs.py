import os
import sqlite3
import subprocess
import tempfile
from pathlib import Path


def migrate(db, d):
    return subprocess.run(["/app/migrate", db, d], capture_output=True, text=True, timeout=30)


def mdir(files):
    d = tempfile.mkdtemp()
    for name, sql in files.items():
        Path(d, name).write_text(sql)
    return d


def versions(db):
    con = sqlite3.connect(db)
    return [tuple(r) for r in con.execute("SELECT version, name FROM schema_migrations ORDER BY version")]


def tables(db):
    con = sqlite3.connect(db)
    return sorted(r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type = 'table'"))


BASE = {
    "2_second.sql": "CREATE TABLE b (x INTEGER);\nINSERT INTO b VALUES (1); INSERT INTO b VALUES (2);\n",
    "1_first.sql": "-- first one; really\nCREATE TABLE a (s TEXT);\nINSERT INTO a VALUES ('semi;colon'' and quote');",
    "10_tenth.sql": "ALTER TABLE b ADD COLUMN y TEXT DEFAULT 'ten';\n",
    "9_ninth.sql": "INSERT INTO b (x) SELECT x + 10 FROM b;\n",
    "notes.md": "# not a migration\n", "3_Bad-Name.sql": "THIS IS NOT SQL;", "4_skip.sql.bak": "nope",
}


def test_applies_in_order_and_records():
    db = tempfile.mktemp(suffix=".db")
    r = migrate(db, mdir(BASE))
    assert r.returncode == 0, r.stderr
    assert r.stdout.split("\n")[:-1] == ["applied 1_first.sql", "applied 2_second.sql", "applied 9_ninth.sql", "applied 10_tenth.sql"]
    assert versions(db) == [(1, "1_first.sql"), (2, "2_second.sql"), (9, "9_ninth.sql"), (10, "10_tenth.sql")]
    con = sqlite3.connect(db)
    assert con.execute("SELECT s FROM a").fetchall() == [("semi;colon' and quote",)]
    assert con.execute("SELECT x, y FROM b ORDER BY x").fetchall() == [(1, "ten"), (2, "ten"), (11, "ten"), (12, "ten")]
    assert all(r[0] for r in con.execute("SELECT applied_at FROM schema_migrations"))


def test_idempotent_and_incremental():
    db = tempfile.mktemp(suffix=".db")
    files = {"001_create_users.sql": "CREATE TABLE users (id INTEGER PRIMARY KEY);\n"}
    d = mdir(files)
    assert migrate(db, d).stdout == "applied 001_create_users.sql\n"
    r = migrate(db, d)
    assert (r.returncode, r.stdout) == (0, "up to date\n")
    Path(d, "002_more.sql").write_text("CREATE TABLE more (v TEXT);")
    r = migrate(db, d)
    assert (r.returncode, r.stdout) == (0, "applied 002_more.sql\n")
    assert versions(db) == [(1, "001_create_users.sql"), (2, "002_more.sql")]
    r = migrate(tempfile.mktemp(suffix=".db"), "/app/migrations")
    assert r.stdout.split() == ["applied", "001_create_users.sql", "applied", "002_add_name.sql", "applied", "010_posts.sql"]


def test_failed_migration_rolls_back():
    db = tempfile.mktemp(suffix=".db")
    files = {"1_ok.sql": "CREATE TABLE t (v INTEGER);\n",
             "2_broken.sql": "CREATE TABLE half (v INTEGER);\nINSERT INTO t VALUES (5);\nINSERT INTO missing_table VALUES (1);\n",
             "3_later.sql": "CREATE TABLE later (v INTEGER);\n"}
    d = mdir(files)
    r = migrate(db, d)
    assert r.returncode == 1
    assert r.stdout == "applied 1_ok.sql\n"
    assert r.stderr.startswith("error: 2_broken.sql: ")
    assert versions(db) == [(1, "1_ok.sql")]
    assert tables(db) == ["schema_migrations", "t"]
    assert sqlite3.connect(db).execute("SELECT COUNT(*) FROM t").fetchone()[0] == 0
    Path(d, "2_broken.sql").write_text("CREATE TABLE half (v INTEGER);\nINSERT INTO t VALUES (5);\n")
    r = migrate(db, d)
    assert (r.returncode, r.stdout) == (0, "applied 2_broken.sql\napplied 3_later.sql\n")
    assert tables(db) == ["half", "later", "schema_migrations", "t"]


def test_duplicate_versions():
    db = tempfile.mktemp(suffix=".db")
    d = mdir({"1_a.sql": "CREATE TABLE a (v);", "01_b.sql": "CREATE TABLE b (v);", "2_c.sql": "CREATE TABLE c (v);"})
    r = migrate(db, d)
    assert r.returncode == 2 and r.stdout == ""
    assert not os.path.exists(db) or "a" not in tables(db) and "c" not in tables(db)
    assert migrate(db, mdir({"5_x.sql": "CREATE TABLE x (v);"})).stdout == "applied 5_x.sql\n"
