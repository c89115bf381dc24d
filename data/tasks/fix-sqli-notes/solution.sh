#!/bin/bash
python3 - <<'PY'
p = "/app/notes_db.py"
s = open(p).read()
s = s.replace("""c.execute(f"SELECT id FROM users WHERE username = '{username}' AND pw_hash = '{_h(password)}'")""",
              """c.execute("SELECT id FROM users WHERE username = ? AND pw_hash = ?", (username, _h(password)))""")
s = s.replace("""c.execute(f"SELECT title FROM notes WHERE owner = {user_id} AND (title LIKE '%{term}%' OR body LIKE '%{term}%') "
                     f"ORDER BY {order}, id")""",
              """c.execute("SELECT title FROM notes WHERE owner = ? AND (instr(lower(title), lower(?)) > 0 OR instr(lower(body), lower(?)) > 0) "
                     f"ORDER BY {order}, id", (user_id, term, term))""")
s = s.replace("""c.execute(f"INSERT INTO notes (owner, title, body, created) VALUES ({user_id}, '{title}', '{body}', "
                    f"(SELECT COALESCE(MAX(created), 0) + 1 FROM notes))")""",
              """c.execute("INSERT INTO notes (owner, title, body, created) VALUES (?, ?, ?, "
                    "(SELECT COALESCE(MAX(created), 0) + 1 FROM notes))", (user_id, title, body))""")
open(p, "w").write(s)
PY
grep -q 'f"SELECT id' /app/notes_db.py && exit 1 || true
