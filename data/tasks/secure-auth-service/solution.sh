#!/bin/bash
cat > /app/authsvc/server.py <<'PY'
import base64, hashlib, hmac, json, os, re, secrets, sys, threading, time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

D = "/app/authsvc"
USERS, KEYF = f"{D}/users.json", f"{D}/secret.key"
TTL = int(os.environ.get("TOKEN_TTL", "3600"))
LOCK = threading.Lock()
FAILS, NONCES = {}, {}
if not os.path.exists(KEYF):
    with open(KEYF, "wb") as f:
        f.write(os.urandom(32))
    os.chmod(KEYF, 0o600)
KEY = open(KEYF, "rb").read()


def load():
    return json.load(open(USERS)) if os.path.exists(USERS) else {}


def hash_pw(pw, salt=None, it=200000):
    salt = salt or os.urandom(16)
    return f"pbkdf2_sha256${it}${salt.hex()}${hashlib.pbkdf2_hmac('sha256', pw.encode(), salt, it).hex()}"


def check_pw(pw, stored):
    _, it, salt, h = stored.split("$")
    return hmac.compare_digest(hash_pw(pw, bytes.fromhex(salt), int(it)).split("$")[3], h)


def b64(b):
    return base64.urlsafe_b64encode(b).rstrip(b"=").decode()


def make_token(user):
    payload = b64(json.dumps({"u": user, "exp": int(time.time()) + TTL}).encode())
    return payload + "." + b64(hmac.new(KEY, payload.encode(), hashlib.sha256).digest())


def read_token(tok):
    try:
        payload, sig = tok.split(".")
        want = b64(hmac.new(KEY, payload.encode(), hashlib.sha256).digest())
        if not hmac.compare_digest(want, sig):
            return None
        d = json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))
        return d["u"] if time.time() < d["exp"] else None
    except Exception:
        return None


class H(BaseHTTPRequestHandler):
    def log_message(self, *a):
        pass

    def reply(self, code, obj):
        body = json.dumps(obj).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def body(self):
        try:
            n = int(self.headers.get("Content-Length", 0))
            d = json.loads(self.rfile.read(n) or b"{}")
            return d if isinstance(d, dict) else None
        except Exception:
            return None

    def user(self):
        a = self.headers.get("Authorization", "")
        return read_token(a[7:]) if a.startswith("Bearer ") else None

    def do_POST(self):
        d = self.body()
        if self.path == "/register":
            u, p = (d or {}).get("username"), (d or {}).get("password")
            if not (isinstance(u, str) and re.fullmatch(r"[a-z0-9_]{3,32}", u) and isinstance(p, str) and len(p) >= 10):
                return self.reply(400, {"error": "invalid"})
            with LOCK:
                users = load()
                if u in users:
                    return self.reply(409, {"error": "exists"})
                users[u] = hash_pw(p)
                tmp = USERS + ".tmp"
                json.dump(users, open(tmp, "w"))
                os.replace(tmp, USERS)
            return self.reply(201, {"ok": True})
        if self.path == "/login":
            u, p = (d or {}).get("username"), (d or {}).get("password")
            if not isinstance(u, str) or not isinstance(p, str):
                return self.reply(400, {"error": "invalid"})
            users = load()
            with LOCK:
                if FAILS.get(u, 0) >= 5:
                    return self.reply(429, {"error": "locked"})
            if u in users and check_pw(p, users[u]):
                with LOCK:
                    FAILS[u] = 0
                return self.reply(200, {"token": make_token(u)})
            if u in users:
                with LOCK:
                    FAILS[u] = FAILS.get(u, 0) + 1
            return self.reply(401, {"error": "bad credentials"})
        if self.path == "/transfer":
            u = self.user()
            if not u:
                return self.reply(401, {"error": "auth"})
            n = self.headers.get("X-CSRF-Token", "")
            with LOCK:
                if NONCES.get(n) != u:
                    return self.reply(403, {"error": "csrf"})
                del NONCES[n]
            if not d or not isinstance(d.get("to"), str) or type(d.get("amount")) is not int or d["amount"] <= 0:
                return self.reply(400, {"error": "bad body"})
            return self.reply(200, {"ok": True})
        self.reply(404, {"error": "not found"})

    def do_GET(self):
        if self.path in ("/me", "/csrf"):
            u = self.user()
            if not u:
                return self.reply(401, {"error": "auth"})
            if self.path == "/me":
                return self.reply(200, {"username": u})
            n = secrets.token_urlsafe(24)
            with LOCK:
                NONCES[n] = u
            return self.reply(200, {"csrf": n})
        self.reply(404, {"error": "not found"})


ThreadingHTTPServer(("127.0.0.1", int(sys.argv[1])), H).serve_forever()
PY
