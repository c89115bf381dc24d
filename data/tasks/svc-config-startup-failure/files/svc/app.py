"""Inventory lookup service.

GET /health        -> 200 {"status": "ok", "items": <number of items loaded>}
GET /items/<id>    -> 200 <the item's JSON object>, or 404 {"error": "not found"}
                      ids are made of letters, digits and dashes, e.g. "SKU-0042"
anything else      -> 404 {"error": "not found"}
Every request is appended to the access log as one line: "<METHOD> <path> <status>".
Settings come from the config file given with --config (see config.ini).
"""
import argparse
import configparser
import json
import re
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

ITEM = re.compile(r"^/items/(\d+)$")


def load_items(data_dir):
    items = {}
    for path in sorted(Path(data_dir).glob("*.json")):
        for item in json.loads(path.read_text(encoding="utf-8")):
            items[item["id"]] = item
    return items


def make_handler(items, log_path):
    class Handler(BaseHTTPRequestHandler):
        def reply(self, status, obj):
            body = json.dumps(obj).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
            with open(log_path, "a") as log:
                log.write(f"{self.command} {self.path} {status}\n")

        def do_GET(self):
            if self.path == "/health":
                return self.reply(200, {"status": "ok", "items": len(items)})
            m = ITEM.match(self.path)
            if m and m.group(1) in items:
                return self.reply(200, items[m.group(1)])
            return self.reply(404, {"error": "not found"})

        def log_message(self, *args):
            pass
    return Handler


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--config", required=True)
    args = ap.parse_args()
    cfg = configparser.ConfigParser()
    cfg.read(args.config)
    host = cfg["server"]["host"]
    port = cfg["server"]["port"]
    items = load_items(cfg["storage"]["data_dir"])
    log_path = cfg["logging"]["access_log"]
    server = ThreadingHTTPServer((host, port), make_handler(items, log_path))
    server.serve_forever()


if __name__ == "__main__":
    main()
