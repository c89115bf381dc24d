import os
import sys
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

ROOT = "/app/public"


class Handler(BaseHTTPRequestHandler):
    def log_message(self, *a):
        pass

    def send_file(self, rel):
        path = os.path.join(ROOT, rel)
        try:
            with open(path, "rb") as f:
                data = f.read()
        except OSError:
            self.send_error(404)
            return
        self.send_response(200)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self):
        u = urllib.parse.urlsplit(self.path)
        if u.path.startswith("/files/"):
            self.send_file(urllib.parse.unquote(u.path[len("/files/"):]))
        elif u.path == "/download":
            name = urllib.parse.parse_qs(u.query).get("name", [""])[0]
            self.send_file(name)
        else:
            self.send_error(404)


if __name__ == "__main__":
    ThreadingHTTPServer(("127.0.0.1", int(sys.argv[1])), Handler).serve_forever()
