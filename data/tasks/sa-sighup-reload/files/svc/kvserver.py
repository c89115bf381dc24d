"""Tiny key/value HTTP service.

GET /<key>   -> 200 text/plain with config["responses"][key], or 404
GET /slow    -> sleeps 1.5 s, then 200 "slow done" (used to test graceful shutdown)
GET /__status -> 200 JSON {"pid": ..., "banner": ..., "reloads": ...}
"""
import argparse
import json
import os
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

CONFIG = {}
RELOADS = 0


def load_config(path):
    with open(path) as f:
        return json.load(f)


class Handler(BaseHTTPRequestHandler):
    def send_text(self, code, text, ctype="text/plain"):
        body = text.encode()
        self.send_response(code)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self):
        key = self.path.lstrip("/")
        if key == "__status":
            return self.send_text(200, json.dumps({"pid": os.getpid(), "banner": CONFIG["banner"],
                                                   "reloads": RELOADS}), "application/json")
        if key == "slow":
            time.sleep(1.5)
            return self.send_text(200, "slow done")
        if key in CONFIG["responses"]:
            return self.send_text(200, CONFIG["responses"][key])
        self.send_text(404, "not found")

    def log_message(self, *args):
        pass


def main():
    global CONFIG
    ap = argparse.ArgumentParser()
    ap.add_argument("--config", default="/app/svc/config.json")
    args = ap.parse_args()
    CONFIG = load_config(args.config)
    server = ThreadingHTTPServer(("127.0.0.1", CONFIG["port"]), Handler)
    server.serve_forever()


if __name__ == "__main__":
    main()
