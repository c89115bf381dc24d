import random
import sqlite3


def original():
    random.seed(5)
    TAGS = ["admin", "beta", "staff", "vip", "trial", "legacy"]
    users = {}
    for i in range(1, 61):
        tags = random.sample(TAGS, random.randint(0, 3))
        random.choice([",", ", ", " , "])
        users[i] = (f"User Number{i}", f"user{i}@example.com", set(tags))
    return users


def db():
    con = sqlite3.connect("file:/app/app.db?mode=ro", uri=True)
    return con


def cols(con, table):
    return {r[1]: (r[2].upper(), r[3], r[4]) for r in con.execute(f"PRAGMA table_info({table})")}


def test_users_table_schema():
    con = db()
    c = cols(con, "users")
    assert set(c) == {"id", "display_name", "email", "active"}
    assert c["active"][0] == "INTEGER" and c["active"][1] == 1 and str(c["active"][2]) == "1"
    rows = con.execute("SELECT id, display_name, email, active FROM users ORDER BY id").fetchall()
    want = original()
    assert [(r[0], r[1], r[2]) for r in rows] == [(i, n, e) for i, (n, e, _) in sorted(want.items())]
    assert all(r[3] == 1 for r in rows)


def test_tags_migrated():
    con = db()
    want = original()
    names = [r[0] for r in con.execute("SELECT name FROM tags")]
    assert sorted(names) == sorted(set().union(*(t for _, _, t in want.values())))
    got = {}
    for uid, name in con.execute("SELECT ut.user_id, t.name FROM user_tags ut JOIN tags t ON t.id = ut.tag_id"):
        got.setdefault(uid, set()).add(name)
    assert got == {i: t for i, (_, _, t) in want.items() if t}
    assert con.execute("SELECT COUNT(*) FROM user_tags").fetchone()[0] == sum(len(t) for _, _, t in want.values())
    fks = {(r[2], r[3], r[4], r[6]) for r in con.execute("PRAGMA foreign_key_list(user_tags)")}
    assert ("users", "user_id", "id", "CASCADE") in fks
    pk = sorted((r[5], r[1]) for r in con.execute("PRAGMA table_info(user_tags)") if r[5])
    assert [n for _, n in pk] == ["user_id", "tag_id"]
    con.execute("PRAGMA foreign_keys = ON")
    mem = sqlite3.connect(":memory:")
    con.backup(mem)
    mem.execute("PRAGMA foreign_keys = ON")
    mem.execute("DELETE FROM users WHERE id = (SELECT user_id FROM user_tags LIMIT 1)")
    assert mem.execute("SELECT COUNT(*) FROM user_tags WHERE user_id NOT IN (SELECT id FROM users)").fetchone()[0] == 0


def test_index_and_version():
    con = db()
    assert con.execute("PRAGMA user_version").fetchone()[0] == 2
    idx = {r[1]: r[2] for r in con.execute("PRAGMA index_list(users)")}
    assert idx.get("idx_users_email") == 1
    assert [r[2] for r in con.execute("PRAGMA index_info(idx_users_email)")] == ["email"]
    assert con.execute("SELECT COUNT(*) FROM users").fetchone()[0] == 60
