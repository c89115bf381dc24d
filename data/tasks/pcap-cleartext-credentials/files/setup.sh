set -e
python3 - <<'PY'
import base64, socket, struct
pk = []
t = [1700000000]
def ip2b(ip): return socket.inet_aton(ip)
def csum(b):
    if len(b) % 2: b += b"\0"
    s = sum(struct.unpack("!%dH" % (len(b) // 2), b)); s = (s >> 16) + (s & 0xffff); s += s >> 16
    return ~s & 0xffff
def pkt(src, sport, dst, dport, seq, payload, flags=0x18):
    tcp = struct.pack("!HHIIBBHHH", sport, dport, seq, 1, 5 << 4, flags, 65535, 0, 0) + payload
    ip = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + len(tcp), 1, 0, 64, 6, 0, ip2b(src), ip2b(dst))
    ip = ip[:10] + struct.pack("!H", csum(ip)) + ip[12:]
    eth = b"\x00\x11\x22\x33\x44\x55" + b"\x66\x77\x88\x99\xaa\xbb" + b"\x08\x00"
    t[0] += 1
    pk.append(struct.pack("<IIII", t[0], 0, len(eth + ip + tcp), len(eth + ip + tcp)) + eth + ip + tcp)
def stream(src, sport, dst, dport, chunks, order=None, isn=1000):
    segs, off = [], 0
    for c in chunks:
        segs.append((isn + off, c)); off += len(c)
    for i in (order or range(len(segs))):
        pkt(src, sport, dst, dport, *segs[i])
def b64(s): return base64.b64encode(s.encode()).decode()
# noise
stream("10.0.0.5", 51000, "93.184.216.34", 80, [b"GET / HTTP/1.1\r\nHost: example.com\r\n\r\n"])
stream("93.184.216.34", 80, "10.0.0.5", 51000, [b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nhi"], isn=5000)
# http basic, simple
stream("10.0.0.7", 52001, "10.0.1.20", 8080, [f"GET /admin HTTP/1.1\r\nHost: intranet\r\nAuthorization: Basic {b64('alice:Spring2024!')}\r\n\r\n".encode()])
# http basic split across segments, out of order, with a retransmission, lower-case header, password with colon
req = f"POST /api HTTP/1.1\r\nHost: api\r\nauthorization: Basic {b64('svc-backup:p@ss:w0rd')}\r\nContent-Length: 0\r\n\r\n".encode()
stream("10.0.0.9", 40123, "10.0.1.21", 80, [req[:30], req[30:55], req[55:]], order=[0, 2, 1, 2])
# bearer token is not basic auth
stream("10.0.0.9", 40124, "10.0.1.21", 80, [b"GET / HTTP/1.1\r\nAuthorization: Bearer eyJhbGciOi\r\n\r\n"])
# same credentials sent twice on same connection -> reported once
r2 = f"GET /a HTTP/1.1\r\nAuthorization: Basic {b64('bob:hunter2')}\r\n\r\nGET /b HTTP/1.1\r\nAuthorization: Basic {b64('bob:hunter2')}\r\n\r\n".encode()
stream("10.0.0.11", 33333, "10.0.1.20", 8080, [r2])
# ftp, server banner + user/pass split
stream("10.0.1.30", 21, "10.0.0.7", 50500, [b"220 FTP ready\r\n", b"331 Password required\r\n", b"230 Logged in\r\n"], isn=9000)
stream("10.0.0.7", 50500, "10.0.1.30", 21, [b"USER ali", b"ce\r\nPA", b"SS ftp-S3cret\r\n", b"LIST\r\n"], order=[1, 0, 3, 2])
stream("10.0.0.12", 50600, "10.0.1.30", 2121, [b"USER anonymous\r\n", b"PASS guest@example.com\r\n", b"QUIT\r\n"])
stream("10.0.0.13", 50700, "10.0.1.30", 21, [b"USER mallory\r\n", b"QUIT\r\n"])
hdr = struct.pack("<IHHiIII", 0xa1b2c3d4, 2, 4, 0, 0, 65535, 1)
open("/app/capture.pcap", "wb").write(hdr + b"".join(pk))
PY
