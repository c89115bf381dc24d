import base64
import importlib.util

RFC = "GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ"


def mod():
    spec = importlib.util.spec_from_file_location("totp", "/app/totp.py")
    m = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(m)
    return m


def test_rfc_vectors():
    m = mod()
    for t, code in [(59, "287082"), (1111111109, "081804"), (1111111111, "050471"), (1234567890, "005924"),
                    (2000000000, "279037"), (20000000000, "353130")]:
        assert m.totp(RFC, t) == code, t


def test_secret_normalisation():
    m = mod()
    other = base64.b32encode(b"hidden-secret!").decode()  # has '=' padding
    assert other.endswith("=")
    a = m.totp(other, 1700000000)
    assert m.totp(other.rstrip("="), 1700000000) == a
    spaced = " ".join(other.rstrip("=").lower()[i:i + 4] for i in range(0, len(other.rstrip("=")), 4))
    assert m.totp(spaced, 1700000000) == a
    assert m.totp(RFC.lower(), 59) == "287082"
    assert len(a) == 6 and a.isdigit() and a != m.totp(other, 1700000030)


def test_verify_window_and_rejects():
    m = mod()
    t = 1111111111
    code = m.totp(RFC, t)
    assert m.verify(RFC, code, t) is True
    assert m.verify(RFC, m.totp(RFC, t - 30), t) is True
    assert m.verify(RFC, m.totp(RFC, t + 30), t) is True
    assert m.verify(RFC, m.totp(RFC, t - 60), t) is False
    assert m.verify(RFC, m.totp(RFC, t - 60), t, window=2) is True
    assert m.verify(RFC, m.totp(RFC, t - 30), t, window=0) is False
    for bad in ["", "05047", "0504711", "05047a", " 050471", "050471 ", "٠٥٠٤٧١", None, 50471]:
        assert m.verify(RFC, bad, t) is False, repr(bad)
    assert m.verify("!!!not base32!!!", "123456", t) is False
