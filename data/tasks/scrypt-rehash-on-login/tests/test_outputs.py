import hashlib
import importlib.util
import re
import shutil
import sqlite3

import pytest


@pytest.fixture()
def auth():
    shutil.copy("/app/users.db", "/tmp/users_backup.db")
    spec = importlib.util.spec_from_file_location("auth", "/app/auth.py")
    m = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(m)
    yield m
    shutil.copy("/tmp/users_backup.db", "/app/users.db")


def stored(user):
    c = sqlite3.connect("/app/users.db")
    row = c.execute("SELECT pw FROM users WHERE username = ?", (user,)).fetchone()
    c.close()
    return row[0] if row else None


def check_scrypt(value, pw):
    m = re.fullmatch(r"scrypt\$16384\$8\$1\$([0-9a-f]{32})\$([0-9a-f]{128})", value)
    assert m, value
    assert hashlib.scrypt(pw.encode(), salt=bytes.fromhex(m.group(1)), n=16384, r=8, p=1, dklen=64).hex() == m.group(2)
    return m.group(1)


def test_legacy_logins(auth):
    assert auth.login("alice", "wonderland") is True
    assert auth.login("bob", "bücher-42") is True
    assert auth.login("carol", "carol-pass") is True
    assert auth.login("dave", "nosalt") is True


def test_upgrade_to_scrypt(auth):
    salts = set()
    for u, pw in [("alice", "wonderland"), ("bob", "bücher-42"), ("carol", "carol-pass")]:
        assert auth.login(u, pw) is True
        salts.add(check_scrypt(stored(u), pw))
        assert auth.login(u, pw) is True  # still works with the new hash
        assert auth.login(u, pw + "x") is False
    assert len(salts) == 3


def test_failures_do_not_modify(auth):
    before = {u: stored(u) for u in ["alice", "bob", "carol", "dave", "erin", "frank"]}
    assert auth.login("alice", "Wonderland") is False
    assert auth.login("carol", "x9Qzcarol-pass") is False
    assert auth.login("nobody", "x") is False
    assert auth.login("alice' OR '1'='1", "x") is False
    assert auth.login("erin", "anything") is False
    assert auth.login("frank", "anything") is False
    assert {u: stored(u) for u in before} == before
    assert auth.login("alice", "wonderland") is True


def test_set_password_and_params(auth):
    auth.set_password("erin", "n3w-Passphrase")
    check_scrypt(stored("erin"), "n3w-Passphrase")
    assert auth.login("erin", "n3w-Passphrase") is True
    with pytest.raises(KeyError):
        auth.set_password("ghost", "pw")
    salt = bytes(range(16))
    c = sqlite3.connect("/app/users.db")
    v = f"scrypt$1024$4$2${salt.hex()}${hashlib.scrypt(b'low-cost', salt=salt, n=1024, r=4, p=2, dklen=64).hex()}"
    c.execute("UPDATE users SET pw = ? WHERE username = 'dave'", (v,))
    c.commit()
    c.close()
    assert auth.login("dave", "low-cost") is True
    assert auth.login("dave", "low-cosT") is False
