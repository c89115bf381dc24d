set -e
python3 - <<'PY'
import base64, os, random, struct
r = random.Random(1234)
def s(b): return struct.pack(">I", len(b)) + b
def mpint(v):
    b = v.to_bytes((v.bit_length() + 7) // 8, "big")
    if b[0] & 0x80: b = b"\x00" + b
    return s(b)
def rsa(bits): n = r.getrandbits(bits) | (1 << (bits - 1)) | 1; return s(b"ssh-rsa") + mpint(65537) + mpint(n)
def dsa(bits): return s(b"ssh-dss") + mpint(r.getrandbits(bits) | (1 << (bits - 1))) + mpint(r.getrandbits(160) | (1 << 159)) + mpint(r.getrandbits(bits - 8)) + mpint(r.getrandbits(bits - 8))
def ed(): return s(b"ssh-ed25519") + s(bytes(r.getrandbits(8) for _ in range(32)))
def ec(): return s(b"ecdsa-sha2-nistp256") + s(b"nistp256") + s(b"\x04" + bytes(r.getrandbits(8) for _ in range(64)))
def line(blob, comment, opts=None):
    typ = blob[4:4 + struct.unpack(">I", blob[:4])[0]].decode()
    t = f"{typ} {base64.b64encode(blob).decode()} {comment}"
    return (opts + " " + t) if opts else t
shared = ed()
rsa_dep = rsa(4096)
files = {
    "alice": ["# alice's keys", line(rsa(3072), "alice@laptop"), "", line(shared, "team-deploy-key"),
              line(ec(), "alice@phone", 'from="10.0.0.0/8,192.168.1.0/24"')],
    "bob": [line(dsa(1024), "bob@oldbox"), line(rsa(1024), "bob@vm"),
            line(shared, "team-deploy-key", 'command="/usr/bin/deploy --tag \\"x, y\\"",no-pty'),
            line(rsa(2047), "bob@odd")],
    "carol": [line(rsa(2048), "carol@work"), "   ", line(ed(), "carol@home", 'restrict,command="echo hi there, friend"'),
              "#" + line(rsa(1024), "disabled old key"), line(rsa_dep, "ci@build")],
    "deploy": [line(rsa_dep, "ci@build", 'from="10.1.2.3"'), line(ed(), "deploy@bastion")],
}
for u, ls in files.items():
    os.makedirs(f"/app/home/{u}/.ssh", exist_ok=True)
    open(f"/app/home/{u}/.ssh/authorized_keys", "w").write("\n".join(ls) + "\n")
PY
