#!/bin/bash
cat > /app/accountd.py <<'PY'
import argparse
import json
import os
import re
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

LOCK = threading.Lock()
NAME = re.compile(r"^[a-z_][a-z0-9_-]{0,31}$")


class Err(Exception):
    def __init__(self, code, msg):
        super().__init__(msg)
        self.code = code


def path(n):
    return os.path.join(ROOT, "etc", n)


def read(n):
    with open(path(n)) as f:
        return [l.rstrip("\n").split(":") for l in f if l.strip()]


def write(n, rows):
    tmp = path(n) + ".tmp"
    with open(tmp, "w") as f:
        f.write("".join(":".join(r) + "\n" for r in rows))
    os.replace(tmp, path(n))


def obj(p, groups):
    return {"name": p[0], "uid": int(p[2]), "gid": int(p[3]), "home": p[5], "shell": p[6],
            "groups": sorted(g[0] for g in groups if p[0] in g[3].split(","))}


def create(body):
    try:
        req = json.loads(body)
        assert isinstance(req, dict)
    except Exception:
        raise Err(400, "invalid JSON")
    name = req.get("name")
    if not isinstance(name, str) or not NAME.match(name):
        raise Err(400, "invalid name")
    shell, want = req.get("shell", "/bin/bash"), req.get("groups", [])
    pw, gr, sh = read("passwd"), read("group"), read("shadow")
    gnames = {g[0] for g in gr}
    if not isinstance(want, list) or any(w not in gnames for w in want):
        raise Err(400, "unknown group")
    if name in {p[0] for p in pw} or name in gnames:
        raise Err(409, "name in use")
    uids, gids = {int(p[2]) for p in pw}, {int(g[2]) for g in gr}
    uid = req.get("uid")
    if uid is None:
        uid = 1000
        while uid in uids:
            uid += 1
    elif not isinstance(uid, int) or uid < 0:
        raise Err(400, "invalid uid")
    elif uid in uids:
        raise Err(409, "uid in use")
    gid = uid
    if gid in gids:
        gid = 1000
        while gid in gids:
            gid += 1
    p = [name, "x", str(uid), str(gid), "", f"/home/{name}", shell]
    for g in gr:
        if g[0] in want:
            g[3] = ",".join([m for m in g[3].split(",") if m] + [name])
    gr.append([name, "x", str(gid), ""])
    write("passwd", pw + [p])
    write("group", gr)
    write("shadow", sh + [[name, "!", "19000", "0", "99999", "7", "", "", ""]])
    home = os.path.join(ROOT, "home", name)
    os.makedirs(home, exist_ok=True)
    os.chown(home, uid, gid)
    os.chmod(home, 0o750)
    return obj(p, gr)


def delete(name):
    pw, gr, sh = read("passwd"), read("group"), read("shadow")
    me = [p for p in pw if p[0] == name]
    if not me:
        raise Err(404, "no such user")
    pw = [p for p in pw if p[0] != name]
    gid = me[0][3]
    out = []
    for g in gr:
        if g[0] == name and g[2] == gid and all(p[3] != gid for p in pw):
            continue
        g[3] = ",".join(m for m in g[3].split(",") if m and m != name)
        out.append(g)
    write("passwd", pw)
    write("group", out)
    write("shadow", [s for s in sh if s[0] != name])


class H(BaseHTTPRequestHandler):
    def reply(self, code, data=None):
        body = b"" if data is None else json.dumps(data).encode()
        self.send_response(code)
        if data is not None:
            self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def handle_req(self, fn):
        try:
            with LOCK:
                code, data = fn()
            self.reply(code, data)
        except Err as e:
            self.reply(e.code, {"error": str(e)})

    def do_GET(self):
        def fn():
            pw, gr = read("passwd"), read("group")
            if self.path == "/users":
                return 200, [obj(p, gr) for p in sorted(pw, key=lambda p: int(p[2]))]
            if self.path.startswith("/users/"):
                m = [p for p in pw if p[0] == self.path[7:]]
                if m:
                    return 200, obj(m[0], gr)
                raise Err(404, "no such user")
            raise Err(404, "not found")
        self.handle_req(fn)

    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0))

        def fn():
            if self.path != "/users":
                raise Err(404, "not found")
            return 201, create(body)
        self.handle_req(fn)

    def do_DELETE(self):
        def fn():
            if not self.path.startswith("/users/"):
                raise Err(404, "not found")
            delete(self.path[7:])
            return 204, None
        self.handle_req(fn)

    def log_message(self, *a):
        pass


ap = argparse.ArgumentParser()
ap.add_argument("--root", required=True)
ap.add_argument("--port", type=int, required=True)
args = ap.parse_args()
ROOT = args.root
class Server(ThreadingHTTPServer):
    request_queue_size = 128


Server(("127.0.0.1", args.port), H).serve_forever()
PY
