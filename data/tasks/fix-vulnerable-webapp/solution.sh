#!/bin/bash
set -e
cd /app/webapp
python3 - <<'PY'
import re
s = open("db.py").read()
s = s.replace("""c.execute(f"SELECT name FROM products WHERE lower(name) LIKE lower('%{q}%') ORDER BY name")""",
              """c.execute("SELECT name FROM products WHERE instr(lower(name), lower(?)) > 0 ORDER BY name", (q,))""")
open("db.py", "w").write(s)
s = open("app.py").read()
s = s.replace("""            if not db.customer_for_key(self.headers.get("X-Api-Key", "")):
                return self.send(401, {"error": "unauthorized"})""", """            who = db.customer_for_key(self.headers.get("X-Api-Key", ""))
            if not who:
                return self.send(401, {"error": "unauthorized"})""")
s = s.replace("""            return self.send(200, inv) if inv else self.send(404, {"error": "not found"})""",
              """            return self.send(200, inv) if inv and inv["customer"] == who else self.send(404, {"error": "not found"})""")
s = s.replace("""            ok, out = tools.lookup(q.get("host", [""])[0])""", """            host = q.get("host", [""])[0]
            if not tools.valid_host(host):
                return self.send(400, {"error": "bad host"})
            ok, out = tools.lookup(host)""")
open("app.py", "w").write(s)
PY
cat > files.py <<'PY'
import os

DOCS = "/app/webapp/docs"


def read_doc(name):
    """Bytes of the document `name` in DOCS, or None if it doesn't exist."""
    if not name or "/" in name or "\\" in name or "\x00" in name or name in (".", ".."):
        return None
    path = os.path.join(DOCS, name)
    if os.path.islink(path) or not os.path.isfile(path):
        return None
    with open(path, "rb") as f:
        return f.read()
PY
cat > tools.py <<'PY'
import re
import subprocess

_HOST = re.compile(r"[A-Za-z0-9.][A-Za-z0-9.-]{0,252}")


def valid_host(host):
    return isinstance(host, str) and _HOST.fullmatch(host) is not None


def lookup(host):
    """(found, output) of `getent hosts HOST`."""
    if not valid_host(host):
        raise ValueError("invalid host")
    r = subprocess.run(["getent", "hosts", host], capture_output=True, text=True)
    return r.returncode == 0, r.stdout
PY
