"""Tiny status service. Reads its settings from app.ini next to this file."""
import configparser
import json
from http.server import BaseHTTPRequestHandler, HTTPServer
from pathlib import Path

cfg = configparser.ConfigParser()
cfg.read(Path(__file__).with_name("app.ini"))


class Handler(BaseHTTPRequestHandler):
    def do_GET(self):
        body = json.dumps({"greeting": cfg["app"]["greeting"], "environment": cfg["app"]["environment"]}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


if __name__ == "__main__":
    HTTPServer((cfg["server"]["host"], cfg["server"].getint("port")), Handler).serve_forever()
