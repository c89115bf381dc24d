"""kvd: a tiny key/value server (see PROTOCOL.md)."""
import argparse
import socketserver

from kvproto import recv_msg, send_msg

STORE = {}


def handle(req):
    op = req.get("op")
    if op == "set":
        STORE[req["key"]] = req["value"]
        return {"ok": True}
    if op == "get":
        if req["key"] in STORE:
            return {"ok": True, "value": STORE[req["key"]]}
        return {"ok": False, "error": "not found"}
    if op == "del":
        return {"ok": True, "deleted": STORE.pop(req["key"], None) is not None}
    if op == "keys":
        return {"ok": True, "keys": list(STORE)}
    return {"ok": False, "error": "bad request"}


class Handler(socketserver.BaseRequestHandler):
    def handle(self):
        while True:
            req = recv_msg(self.request)
            if req is None:
                return
            send_msg(self.request, handle(req))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--port", type=int, default=7070)
    args = ap.parse_args()
    socketserver.TCPServer.allow_reuse_address = True
    with socketserver.TCPServer(("127.0.0.1", args.port), Handler) as srv:
        srv.serve_forever()


if __name__ == "__main__":
    main()
