import base64
import json
import os
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

USERS = "/app/authsvc/users.json"


def load():
    return json.load(open(USERS)) if os.path.exists(USERS) else {}


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
        n = int(self.headers.get("Content-Length", 0))
        return json.loads(self.rfile.read(n) or b"{}")

    def do_POST(self):
        d = self.body()
        users = load()
        if self.path == "/register":
            users[d["username"]] = d["password"]
            json.dump(users, open(USERS, "w"))
            return self.reply(201, {})
        if self.path == "/login":
            if users.get(d["username"]) == d["password"]:
                return self.reply(200, {"token": base64.b64encode(d["username"].encode()).decode()})
            return self.reply(401, {})
        self.reply(404, {})

    def do_GET(self):
        if self.path == "/me":
            tok = self.headers.get("Authorization", "")[7:]
            return self.reply(200, {"username": base64.b64decode(tok).decode()})
        self.reply(404, {})


ThreadingHTTPServer(("127.0.0.1", int(sys.argv[1])), H).serve_forever()
