import os
import subprocess
import tempfile
from pathlib import Path

ALPHABET = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"


def enc(v):
    return "".join(ALPHABET[(v >> s) & 31] for s in (15, 10, 5, 0))


def reference_key(user: bytes) -> str:
    # independent re-implementation of the checker's algorithm (the binary may have been modified)
    h = 0x811C9DC5
    for b in user:
        h = ((h ^ b) * 16777619) & 0xFFFFFFFF
    k = enc(h & 0xFFFFF) + "-" + enc(((h >> 12) ^ 0x5A5A5) & 0xFFFFF) + "-" + \
        enc((((h << 7) | (h >> 25)) & 0xFFFFFFFF) & 0xFFFFF)
    s = 0
    for ch in k.replace("-", ""):
        s = (s * 31 + ord(ch)) & 0xFFFFFFFF
    return k + "-" + enc(s & 0xFFFFF)


def keygen(user):
    # a copy of the keygen run without access to /app/checker
    with tempfile.TemporaryDirectory() as d:
        script = Path(d, "keygen.py")
        script.write_text(Path("/app/keygen.py").read_text())
        r = subprocess.run(["python3", str(script), user], capture_output=True, text=True, timeout=30,
                           cwd=d, env=dict(os.environ, PATH="/usr/bin:/bin"))
    assert r.returncode == 0, r.stderr
    return r.stdout.strip()


def test_key_file_valid():
    assert Path("/app/key.txt").read_text().strip() == reference_key(b"acme-corp")


def test_keygen_ascii_users():
    for user in ("acme-corp", "alice", "Globex Corporation", "a", "x" * 40):
        assert keygen(user) == reference_key(user.encode()), user


def test_keygen_utf8_user():
    for user in ("zoë", "Müller GmbH", "東京"):
        assert keygen(user) == reference_key(user.encode("utf-8")), user
