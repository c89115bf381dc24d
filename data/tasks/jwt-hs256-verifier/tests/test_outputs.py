import base64
import hashlib
import hmac
import importlib.util
import json

import pytest

K = {"k1": b"k1-secret-0f3a9c", "k2": b"second key \x00\xff"}
NOW = 1700000000
CLAIMS = {"sub": "carol", "iss": "https://auth.example.com", "aud": "api", "exp": NOW + 600}


def mod():
    spec = importlib.util.spec_from_file_location("jwtcheck", "/app/jwtcheck.py")
    m = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(m)
    return m


def b(x):
    return base64.urlsafe_b64encode(x).rstrip(b"=").decode()


def make(claims=None, header=None, key=None, raw_header=None, raw_payload=None):
    h = raw_header if raw_header is not None else b(json.dumps(header or {"alg": "HS256", "kid": "k1"}).encode())
    p = raw_payload if raw_payload is not None else b(json.dumps(CLAIMS if claims is None else claims).encode())
    kid = (header or {}).get("kid", "k1")
    k = key if key is not None else K.get(kid, b"x")
    return f"{h}.{p}." + b(hmac.new(k, f"{h}.{p}".encode(), hashlib.sha256).digest())


def rejects(m, tok, now=NOW):
    with pytest.raises(m.InvalidToken):
        m.verify(tok, K, now)


def test_valid_tokens():
    m = mod()
    sample = open("/app/tokens/valid.jwt").read().strip()
    assert m.verify(sample, K, NOW)["sub"] == "alice"
    assert m.verify(make(), K, NOW) == CLAIMS
    c = dict(CLAIMS, aud=["web", "api"], nbf=NOW, sub="é✓")
    assert m.verify(make(c, {"alg": "HS256", "kid": "k2", "typ": "JWT"}), K, NOW)["sub"] == "é✓"
    rejects(m, open("/app/tokens/expired.jwt").read().strip())


def test_alg_and_kid_attacks():
    m = mod()
    h_none = b(json.dumps({"alg": "none", "kid": "k1"}).encode())
    p = b(json.dumps(CLAIMS).encode())
    rejects(m, f"{h_none}.{p}.")
    rejects(m, make(header={"alg": "none", "kid": "k1"}))
    rejects(m, make(header={"alg": "HS512", "kid": "k1"}))
    rejects(m, make(header={"alg": "hs256", "kid": "k1"}))
    rejects(m, make(header={"kid": "k1"}))
    rejects(m, make(header={"alg": "HS256"}, key=K["k1"]))
    rejects(m, make(header={"alg": "HS256", "kid": "k3"}, key=b"x"))
    rejects(m, make(header={"alg": "HS256", "kid": ["k1"]}, key=K["k1"]))
    rejects(m, make(header={"alg": "HS256", "kid": "k2"}, key=K["k1"]))
    assert m.verify(make(header={"alg": "HS256", "kid": "k2"}), K, NOW)["sub"] == "carol"


def test_signature_and_encoding():
    m = mod()
    good = make()
    h, p, s = good.split(".")
    flipped = s[:-2] + ("A" if s[-2] != "A" else "B") + s[-1]
    for t in [f"{h}.{p}.{flipped}", f"{h}.{p}.", f"{h}.{p}", good + ".x", f"{h}.{p}.{s}==", f"{h}.{p}.{s.replace('-', '+').replace('_', '/')}" if ("-" in s or "_" in s) else f"{h}.{p}.{s}!",
              f"{h} .{p}.{s}", "", "a.b.c", "...", None, 12345]:
        rejects(m, t)
    forged = b(json.dumps(dict(CLAIMS, sub="admin")).encode())
    rejects(m, f"{h}.{forged}.{s}")
    rejects(m, make(raw_payload=b(b"[1, 2, 3]")))
    rejects(m, make(raw_payload=b(b"\xff\xfe{}")))
    rejects(m, make(raw_header=b(b"not json")))


def test_claims_checks():
    m = mod()
    rejects(m, make(dict(CLAIMS, exp=NOW)))
    rejects(m, make({k: v for k, v in CLAIMS.items() if k != "exp"}))
    rejects(m, make(dict(CLAIMS, exp=str(NOW + 600))))
    rejects(m, make(dict(CLAIMS, exp=float(NOW + 600))))
    rejects(m, make(dict(CLAIMS, nbf=NOW + 1)))
    rejects(m, make(dict(CLAIMS, nbf=True)))
    rejects(m, make(dict(CLAIMS, iss="https://auth.example.com.evil.io")))
    rejects(m, make(dict(CLAIMS, aud="apis")))
    rejects(m, make(dict(CLAIMS, aud=["web"])))
    rejects(m, make(dict(CLAIMS, aud="api"), key=b"k1-secret-0f3a9c!"))
    assert m.verify(make(dict(CLAIMS, nbf=NOW - 5)), K, NOW)["exp"] == NOW + 600
