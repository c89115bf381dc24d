"""kvcli: command-line client for kvd (see PROTOCOL.md)."""
import argparse
import json
import socket
import sys

from kvproto import recv_msg, send_msg


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--port", type=int, default=7070)
    ap.add_argument("op")
    ap.add_argument("args", nargs="*")
    a = ap.parse_args()
    req = {"op": a.op}
    if a.op in ("set", "get", "del"):
        req["key"] = a.args[0]
    if a.op == "set":
        req["value"] = json.loads(a.args[1])
    with socket.create_connection(("127.0.0.1", a.port)) as s:
        send_msg(s, req)
        print(json.dumps(recv_msg(s)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
