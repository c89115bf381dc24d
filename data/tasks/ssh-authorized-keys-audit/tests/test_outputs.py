import base64
import csv
import hashlib
import re

EXPECTED = [  # user, line, type, bits, status
    ("alice", 2, "ssh-rsa", 3072, "ok"), ("alice", 4, "ssh-ed25519", 256, "shared"),
    ("alice", 5, "ecdsa-sha2-nistp256", 256, "ok"),
    ("bob", 1, "ssh-dss", 1024, "weak"), ("bob", 2, "ssh-rsa", 1024, "weak"), ("bob", 3, "ssh-ed25519", 256, "shared"),
    ("bob", 4, "ssh-rsa", 2047, "weak"),
    ("carol", 1, "ssh-rsa", 2048, "ok"), ("carol", 3, "ssh-ed25519", 256, "ok"), ("carol", 5, "ssh-rsa", 4096, "shared"),
    ("deploy", 1, "ssh-rsa", 4096, "shared"), ("deploy", 2, "ssh-ed25519", 256, "ok"),
]


def rows():
    return list(csv.DictReader(open("/app/ssh_key_audit.csv", newline="")))


def test_rows_types_and_lines():
    assert [(r["user"], int(r["line"]), r["type"]) for r in rows()] == [e[:3] for e in EXPECTED]


def test_bits():
    assert [int(r["bits"]) for r in rows()] == [e[3] for e in EXPECTED]


def test_fingerprints():
    got = rows()
    assert len(got) == len(EXPECTED)
    for r in got:
        line = open(f"/app/home/{r['user']}/.ssh/authorized_keys").read().splitlines()[int(r["line"]) - 1]
        b64 = re.search(re.escape(r["type"]) + r" ([A-Za-z0-9+/=]+)", line).group(1)
        fp = "SHA256:" + base64.b64encode(hashlib.sha256(base64.b64decode(b64)).digest()).decode().rstrip("=")
        assert r["fingerprint"] == fp, r


def test_status():
    assert [(r["user"], int(r["line"]), r["status"]) for r in rows()] == [(e[0], e[1], e[4]) for e in EXPECTED]
