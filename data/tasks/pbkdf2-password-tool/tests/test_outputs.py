import hashlib
import re
import subprocess


def run(*args):
    return subprocess.run(["python3", "/app/pwtool.py", *args], capture_output=True, text=True, timeout=60)


def stored(pw, salt, it):
    return f"pbkdf2_sha256${it}${salt.hex()}${hashlib.pbkdf2_hmac('sha256', pw.encode(), salt, it).hex()}"


def test_hash_format_and_value():
    outs = []
    for pw in ["correct horse", "correct horse", "pässwörd ✓"]:
        r = run("hash", pw)
        assert r.returncode == 0, r.stderr
        line = r.stdout.strip()
        m = re.fullmatch(r"pbkdf2_sha256\$(\d+)\$([0-9a-f]+)\$([0-9a-f]{64})", line)
        assert m, line
        it, salt = int(m.group(1)), bytes.fromhex(m.group(2))
        assert it >= 200000 and len(salt) >= 16
        assert hashlib.pbkdf2_hmac("sha256", pw.encode(), salt, it).hex() == m.group(3)
        outs.append(m.group(2))
    assert len(set(outs)) == 3


def test_verify_accepts_and_rejects():
    s = stored("Tr0ub4dor&3", bytes.fromhex("00112233445566778899aabbccddeeff"), 1000)
    assert run("verify", "Tr0ub4dor&3", s).returncode == 0
    assert run("verify", "Tr0ub4dor&4", s).returncode == 1
    assert run("verify", "", s).returncode == 1
    s2 = stored("naïve", b"\x01" * 20, 5000)
    assert run("verify", "naïve", s2).returncode == 0
    assert run("verify", "naive", s2).returncode == 1
    h = run("hash", "round trip").stdout.strip()
    assert run("verify", "round trip", h).returncode == 0
    assert run("verify", "round trip!", h).returncode == 1


def test_malformed_stored_values():
    good = stored("pw", b"\x02" * 16, 1000)
    assert run("verify", "pw", good).returncode == 0
    for bad in ["md5$abc", "pbkdf2_sha1$1000$00$00", "pbkdf2_sha256$many$0011$aabb", "pbkdf2_sha256$1000$zz$aabb",
                "pbkdf2_sha256$1000$0011", "", good + "$extra"]:
        r = run("verify", "pw", bad)
        assert r.returncode == 2, bad
        assert "Traceback" not in r.stderr, bad
