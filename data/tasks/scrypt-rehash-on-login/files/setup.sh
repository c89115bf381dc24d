set -e
python3 - <<'PY'
import hashlib, sqlite3
c = sqlite3.connect("/app/users.db")
c.execute("CREATE TABLE users (username TEXT PRIMARY KEY, pw TEXT)")
rows = [
    ("alice", hashlib.md5(b"wonderland").hexdigest()),
    ("bob", hashlib.sha1("bücher-42".encode()).hexdigest()),
    ("carol", "sha256$x9Qz$" + hashlib.sha256(b"x9Qzcarol-pass").hexdigest()),
    ("dave", "sha256$$" + hashlib.sha256(b"nosalt").hexdigest()),
    ("erin", "bcrypt$2b$12$abcdefghijklmnopqrstuv"),
    ("frank", "scrypt$16384$8$1$zz$00"),
]
c.executemany("INSERT INTO users VALUES (?, ?)", rows)
c.commit()
PY
