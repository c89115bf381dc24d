#!/bin/bash
set -e
cat > /app/migrate <<'PY'
#!/usr/bin/env python3
import datetime, os, re, sqlite3, sys

db_path, mdir = sys.argv[1], sys.argv[2]
files = sorted((int(re.match(r"\d+", f).group()), f) for f in os.listdir(mdir)
               if re.fullmatch(r"[0-9]+_[a-z0-9_]+\.sql", f))
versions = [v for v, _ in files]
if len(set(versions)) != len(versions):
    print("error: duplicate migration versions", file=sys.stderr)
    sys.exit(2)
con = sqlite3.connect(db_path, isolation_level=None)
con.execute("CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL)")
done = {r[0] for r in con.execute("SELECT version FROM schema_migrations")}
applied = 0
for v, name in files:
    if v in done:
        continue
    sql = open(os.path.join(mdir, name)).read()
    now = datetime.datetime.now(datetime.timezone.utc).isoformat()
    try:
        con.executescript(f"BEGIN;\n{sql}\n;\nINSERT INTO schema_migrations VALUES ({v}, '{name}', '{now}');\nCOMMIT;")
    except sqlite3.Error as e:
        if con.in_transaction:
            con.execute("ROLLBACK")
        print(f"error: {name}: {e}", file=sys.stderr)
        sys.exit(1)
    print(f"applied {name}")
    applied += 1
if not applied:
    print("up to date")
PY
chmod +x /app/migrate
