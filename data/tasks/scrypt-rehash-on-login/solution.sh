#!/bin/bash
cat > /app/auth.py <<'PY'
import hashlib, hmac, os, re, sqlite3

DB = "/app/users.db"


def _scrypt(pw, salt, n=16384, r=8, p=1):
    return hashlib.scrypt(pw.encode(), salt=salt, n=n, r=r, p=p, dklen=64, maxmem=2 ** 28)


def _new_hash(pw):
    salt = os.urandom(16)
    return f"scrypt$16384$8$1${salt.hex()}${_scrypt(pw, salt).hex()}"


def _check(stored, pw):
    """Return (ok, legacy)."""
    try:
        if re.fullmatch(r"[0-9a-f]{32}", stored):
            return hmac.compare_digest(hashlib.md5(pw.encode()).hexdigest(), stored), True
        if re.fullmatch(r"[0-9a-f]{40}", stored):
            return hmac.compare_digest(hashlib.sha1(pw.encode()).hexdigest(), stored), True
        parts = stored.split("$")
        if parts[0] == "sha256" and len(parts) == 3:
            return hmac.compare_digest(hashlib.sha256((parts[1] + pw).encode()).hexdigest(), parts[2]), True
        if parts[0] == "scrypt" and len(parts) == 6:
            n, r, p = int(parts[1]), int(parts[2]), int(parts[3])
            want = bytes.fromhex(parts[5])
            got = hashlib.scrypt(pw.encode(), salt=bytes.fromhex(parts[4]), n=n, r=r, p=p, dklen=len(want), maxmem=2 ** 28)
            return bool(want) and hmac.compare_digest(got, want), False
    except Exception:
        pass
    return False, False


def login(username, password):
    c = sqlite3.connect(DB)
    try:
        row = c.execute("SELECT pw FROM users WHERE username = ?", (username,)).fetchone()
        if not row:
            return False
        ok, legacy = _check(row[0], password)
        if ok and legacy:
            c.execute("UPDATE users SET pw = ? WHERE username = ?", (_new_hash(password), username))
            c.commit()
        return ok
    finally:
        c.close()


def set_password(username, password):
    c = sqlite3.connect(DB)
    try:
        cur = c.execute("UPDATE users SET pw = ? WHERE username = ?", (_new_hash(password), username))
        if cur.rowcount == 0:
            raise KeyError(username)
        c.commit()
    finally:
        c.close()
PY
