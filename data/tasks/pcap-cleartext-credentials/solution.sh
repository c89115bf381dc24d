#!/bin/bash
python3 - <<'PY'
import base64, json, re, socket, struct
data = open("/app/capture.pcap", "rb").read()
off, flows = 24, {}
while off + 16 <= len(data):
    _, _, incl, _ = struct.unpack("<IIII", data[off:off + 16]); p = data[off + 16:off + 16 + incl]; off += 16 + incl
    if p[12:14] != b"\x08\x00": continue
    ip = p[14:]; ihl = (ip[0] & 15) * 4; tot = struct.unpack("!H", ip[2:4])[0]
    if ip[9] != 6: continue
    src, dst = socket.inet_ntoa(ip[12:16]), socket.inet_ntoa(ip[16:20])
    tcp = ip[ihl:tot]; sport, dport, seq = struct.unpack("!HHI", tcp[:8]); doff = (tcp[12] >> 4) * 4
    pay = tcp[doff:]
    if pay: flows.setdefault((f"{src}:{sport}", f"{dst}:{dport}"), {})[seq] = pay
out = set()
for (c, s), segs in flows.items():
    buf = b"".join(segs[k] for k in sorted(segs)).decode("latin-1")
    for m in re.finditer(r"(?im)^authorization:\s*basic\s+([A-Za-z0-9+/=]+)\s*$", buf):
        u, _, pw = base64.b64decode(m.group(1)).decode().partition(":")
        out.add(("http", c, s, u, pw))
    user = None
    for line in buf.split("\r\n"):
        if line.startswith("USER "): user = line[5:]
        elif line.startswith("PASS ") and user is not None: out.add(("ftp", c, s, user, line[5:])); user = None
res = [dict(zip(["protocol", "client", "server", "username", "password"], r)) for r in sorted(out, key=lambda r: (r[0], r[1], r[3]))]
json.dump(res, open("/app/credentials.json", "w"), indent=1)
PY
