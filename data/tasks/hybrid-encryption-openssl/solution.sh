#!/bin/bash
set -e
cat > /app/seal <<'PY'
#!/usr/bin/env python3
import os, struct, subprocess, sys, tempfile
pub, src, dst = sys.argv[1:4]
key, iv = os.urandom(32), os.urandom(16)
with tempfile.TemporaryDirectory() as d:
    open(f"{d}/k", "wb").write(key)
    subprocess.run(["openssl", "pkeyutl", "-encrypt", "-pubin", "-inkey", pub, "-pkeyopt", "rsa_padding_mode:oaep",
                    "-pkeyopt", "rsa_oaep_md:sha256", "-pkeyopt", "rsa_mgf1_md:sha256", "-in", f"{d}/k", "-out", f"{d}/ek"], check=True)
    subprocess.run(["openssl", "enc", "-aes-256-cbc", "-K", key.hex(), "-iv", iv.hex(), "-in", src, "-out", f"{d}/ct"], check=True)
    ek = open(f"{d}/ek", "rb").read()
    open(dst, "wb").write(struct.pack(">I", len(ek)) + ek + iv + open(f"{d}/ct", "rb").read())
PY
cat > /app/unseal <<'PY'
#!/usr/bin/env python3
import os, struct, subprocess, sys, tempfile
priv, src, dst = sys.argv[1:4]
data = open(src, "rb").read()
try:
    (n,) = struct.unpack(">I", data[:4])
    ek, iv, ct = data[4:4 + n], data[4 + n:20 + n], data[20 + n:]
    assert len(ek) == n and len(iv) == 16
except Exception:
    sys.exit("malformed sealed file")
with tempfile.TemporaryDirectory() as d:
    open(f"{d}/ek", "wb").write(ek); open(f"{d}/ct", "wb").write(ct)
    r = subprocess.run(["openssl", "pkeyutl", "-decrypt", "-inkey", priv, "-pkeyopt", "rsa_padding_mode:oaep",
                        "-pkeyopt", "rsa_oaep_md:sha256", "-pkeyopt", "rsa_mgf1_md:sha256", "-in", f"{d}/ek", "-out", f"{d}/k"], capture_output=True)
    if r.returncode != 0:
        sys.exit("cannot decrypt key")
    key = open(f"{d}/k", "rb").read()
    r = subprocess.run(["openssl", "enc", "-d", "-aes-256-cbc", "-K", key.hex(), "-iv", iv.hex(), "-in", f"{d}/ct", "-out", f"{d}/pt"], capture_output=True)
    if r.returncode != 0 or len(key) != 32:
        sys.exit("cannot decrypt data")
    os.replace(f"{d}/pt", dst) if os.path.dirname(os.path.abspath(dst)) == d else open(dst, "wb").write(open(f"{d}/pt", "rb").read())
PY
chmod +x /app/seal /app/unseal
/app/unseal /app/keys/me.pem /app/inbox/message.sealed /app/inbox/message.txt
