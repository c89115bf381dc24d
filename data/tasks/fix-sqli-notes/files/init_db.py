import hashlib, sqlite3
c = sqlite3.connect("/app/notes.db")
c.executescript("""
CREATE TABLE users (id INTEGER PRIMARY KEY, username TEXT UNIQUE, pw_hash TEXT);
CREATE TABLE notes (id INTEGER PRIMARY KEY, owner INTEGER, title TEXT, body TEXT, created INTEGER);
""")
h = lambda p: hashlib.sha256(p.encode()).hexdigest()
c.executemany("INSERT INTO users VALUES (?,?,?)", [(1, "alice", h("wonderland")), (2, "bob", h("builder")), (3, "admin", h("x9!Kq#2mZ"))])
notes = [(1, "Groceries", "milk, eggs"), (1, "Work todo", "finish report"), (2, "Bob secret", "the vault code is 1234"),
         (1, "Apple pie", "recipe: apples, sugar"), (3, "Admin keys", "root password rotation"), (1, "100% done", "progress")]
for i, (o, t, b) in enumerate(notes, 1):
    c.execute("INSERT INTO notes (owner, title, body, created) VALUES (?,?,?,?)", (o, t, b, i))
c.commit()
