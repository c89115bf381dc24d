#!/bin/bash
set -e
cd /app
cat > kvproto.py <<'PY'
"""Framing shared by kvd.py and kvcli.py (see PROTOCOL.md)."""
import json
import struct


def send_msg(sock, obj):
    data = json.dumps(obj).encode("utf-8")
    sock.sendall(struct.pack(">I", len(data)) + data)


def recv_exact(sock, n):
    buf = bytearray()
    while len(buf) < n:
        chunk = sock.recv(min(n - len(buf), 1 << 20))
        if not chunk:
            return None
        buf += chunk
    return bytes(buf)


def recv_raw(sock):
    """Next frame's payload bytes, or None when the peer closed the connection."""
    header = recv_exact(sock, 4)
    if header is None:
        return None
    (n,) = struct.unpack(">I", header)
    return recv_exact(sock, n)


def recv_msg(sock):
    """Next message from sock, or None when the peer closed the connection."""
    data = recv_raw(sock)
    return None if data is None else json.loads(data.decode("utf-8"))
PY
python3 - <<'PY'
p = "/app/kvd.py"
s = open(p).read()
s = s.replace("from kvproto import recv_msg, send_msg", "import json\n\nfrom kvproto import recv_raw, send_msg")
s = s.replace('''def handle(req):
    op = req.get("op")''', '''def handle(req):
    if not isinstance(req, dict):
        return {"ok": False, "error": "bad request"}
    op = req.get("op")
    if op in ("set", "get", "del") and not isinstance(req.get("key"), str):
        return {"ok": False, "error": "bad request"}
    if op == "set" and "value" not in req:
        return {"ok": False, "error": "bad request"}''')
s = s.replace('''        return {"ok": True, "deleted": STORE.pop(req["key"], None) is not None}''',
              '''        deleted = req["key"] in STORE
        STORE.pop(req["key"], None)
        return {"ok": True, "deleted": deleted}''')
s = s.replace('return {"ok": True, "keys": list(STORE)}', 'return {"ok": True, "keys": sorted(STORE)}')
s = s.replace('''            req = recv_msg(self.request)
            if req is None:
                return
            send_msg(self.request, handle(req))''', '''            raw = recv_raw(self.request)
            if raw is None:
                return
            try:
                req = json.loads(raw.decode("utf-8"))
            except ValueError:
                send_msg(self.request, {"ok": False, "error": "bad request"})
                continue
            send_msg(self.request, handle(req))''')
s = s.replace('''    socketserver.TCPServer.allow_reuse_address = True
    with socketserver.TCPServer(''', '''    socketserver.ThreadingTCPServer.allow_reuse_address = True
    socketserver.ThreadingTCPServer.daemon_threads = True
    with socketserver.ThreadingTCPServer(''')
open(p, "w").write(s)
PY
