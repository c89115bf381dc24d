"""Framing shared by kvd.py and kvcli.py (see PROTOCOL.md)."""
import json
import struct


def send_msg(sock, obj):
    text = json.dumps(obj)
    sock.sendall(struct.pack(">I", len(text)) + text.encode("utf-8"))


def recv_msg(sock):
    """Next message from sock, or None when the peer closed the connection."""
    header = sock.recv(4)
    if not header:
        return None
    (n,) = struct.unpack(">I", header)
    data = sock.recv(n)
    return json.loads(data.decode("utf-8"))
