import json
import sys
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

sys.path.insert(0, "/app/webapp")
import db  # noqa: E402
import files  # noqa: E402
import tools  # noqa: E402


class H(BaseHTTPRequestHandler):
    def log_message(self, *a):
        pass

    def send(self, code, body, ctype="application/json"):
        if not isinstance(body, bytes):
            body = json.dumps(body).encode()
        self.send_response(code)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self):
        u = urllib.parse.urlsplit(self.path)
        q = urllib.parse.parse_qs(u.query)
        if u.path == "/search":
            return self.send(200, {"products": db.search_products(q.get("q", [""])[0])})
        if u.path == "/invoice":
            if not db.customer_for_key(self.headers.get("X-Api-Key", "")):
                return self.send(401, {"error": "unauthorized"})
            try:
                inv = db.get_invoice(int(q.get("id", [""])[0]))
            except ValueError:
                return self.send(400, {"error": "bad id"})
            return self.send(200, inv) if inv else self.send(404, {"error": "not found"})
        if u.path.startswith("/docs/"):
            data = files.read_doc(urllib.parse.unquote(u.path[len("/docs/"):]))
            return self.send(200, data, "text/plain") if data is not None else self.send(404, {"error": "not found"})
        if u.path == "/lookup":
            ok, out = tools.lookup(q.get("host", [""])[0])
            return self.send(200 if ok else 404, {"output": out})
        self.send(404, {"error": "not found"})


if __name__ == "__main__":
    ThreadingHTTPServer(("127.0.0.1", int(sys.argv[1])), H).serve_forever()
