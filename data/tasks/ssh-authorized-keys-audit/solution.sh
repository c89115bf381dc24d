#!/bin/bash
python3 - <<'PY'
import base64, csv, glob, hashlib, os, shlex, struct
TYPES = {"ssh-rsa", "ssh-dss", "ssh-ed25519", "ecdsa-sha2-nistp256"}
def fields(blob):
    out, i = [], 0
    while i < len(blob):
        n = struct.unpack(">I", blob[i:i + 4])[0]; out.append(blob[i + 4:i + 4 + n]); i += 4 + n
    return out
rows = []
for path in sorted(glob.glob("/app/home/*/.ssh/authorized_keys")):
    user = path.split("/")[3]
    for ln, text in enumerate(open(path).read().splitlines(), 1):
        t = text.strip()
        if not t or t.startswith("#"):
            continue
        toks = shlex.split(t, posix=False) if False else None
        # find the type token: split respecting quotes
        parts, cur, q = [], "", False
        for ch in t:
            if ch == '"' and (not cur.endswith("\\")): q = not q
            if ch == " " and not q:
                if cur: parts.append(cur)
                cur = ""
            else:
                cur += ch
        if cur: parts.append(cur)
        k = next(i for i, p in enumerate(parts) if p in TYPES)
        typ, blob = parts[k], base64.b64decode(parts[k + 1])
        f = fields(blob)
        if typ == "ssh-rsa": bits = int.from_bytes(f[2], "big").bit_length()
        elif typ == "ssh-dss": bits = int.from_bytes(f[1], "big").bit_length()
        else: bits = 256
        fp = "SHA256:" + base64.b64encode(hashlib.sha256(blob).digest()).decode().rstrip("=")
        rows.append([user, ln, typ, bits, fp, blob])
owners = {}
for r in rows: owners.setdefault(r[5], set()).add(r[0])
with open("/app/ssh_key_audit.csv", "w", newline="") as fh:
    w = csv.writer(fh); w.writerow(["user", "line", "type", "bits", "fingerprint", "status"])
    for u, ln, typ, bits, fp, blob in sorted(rows, key=lambda r: (r[0], r[1])):
        st = "weak" if typ == "ssh-dss" or (typ == "ssh-rsa" and bits < 2048) else ("shared" if len(owners[blob]) > 1 else "ok")
        w.writerow([u, ln, typ, bits, fp, st])
PY
