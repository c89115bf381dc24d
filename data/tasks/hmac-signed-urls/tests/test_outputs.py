import hashlib
import hmac
import importlib.util
import shutil

KEY = b"q7Fz-server-url-signing-key-2024\n"


def mod():
    spec = importlib.util.spec_from_file_location("signing", "/app/signing.py")
    m = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(m)
    return m


def ref(path, exp, key=KEY):
    return f"{path}?expires={exp}&sig=" + hmac.new(key, f"{path}\n{exp}".encode(), hashlib.sha256).hexdigest()


def test_sign_format():
    m = mod()
    assert m.sign("/files/report.pdf", 1700000000) == ref("/files/report.pdf", 1700000000)
    assert m.sign("/d/ünï code.txt", 5) == ref("/d/ünï code.txt", 5)
    shutil.copy("/app/url.key", "/tmp/url.key.bak")
    try:
        open("/app/url.key", "wb").write(b"rotated")
        assert m.sign("/x", 9) == ref("/x", 9, b"rotated")
    finally:
        shutil.copy("/tmp/url.key.bak", "/app/url.key")


def test_verify_valid_and_expired():
    m = mod()
    u = ref("/files/a.zip", 2000)
    assert m.verify(u, 1999) is True
    assert m.verify(u, 2000) is False
    assert m.verify(u, 5000) is False
    assert m.verify(m.sign("/p/q", 10**10), 10**9) is True


def test_verify_rejects_tampering():
    m = mod()
    u = ref("/files/a.zip", 2000)
    sig = u.rsplit("=", 1)[1]
    bad = [
        u.replace("/files/a.zip", "/files/b.zip"),
        u.replace("expires=2000", "expires=9000"),
        u[:-1] + ("0" if u[-1] != "0" else "1"),
        u[:-2],
        u.replace(sig, sig.upper()),
        u + "&admin=1",
        f"/files/a.zip?sig={sig}&expires=2000",
        ref("/files/a.zip", 2000, b"wrong key"),
        "", "garbage", "/files/a.zip?expires=&sig=" + sig, "/files/a.zip?expires=2000&sig=",
        "/files/a.zip?expires=-5&sig=" + sig,
    ]
    assert m.verify(u, 1000) is True
    for b in bad:
        assert m.verify(b, 1000) is False, b
