python3 - <<'PY'
import random, sqlite3
random.seed(5)
TAGS = ["admin", "beta", "staff", "vip", "trial", "legacy"]
db = sqlite3.connect("/app/app.db")
db.execute("CREATE TABLE users (id INTEGER PRIMARY KEY, fullname TEXT NOT NULL, email TEXT NOT NULL, tags TEXT NOT NULL DEFAULT '')")
for i in range(1, 61):
    tags = random.sample(TAGS, random.randint(0, 3))
    sep = random.choice([",", ", ", " , "])
    db.execute("INSERT INTO users VALUES (?,?,?,?)", (i, f"User Number{i}", f"user{i}@example.com", sep.join(tags)))
db.commit()
PY
