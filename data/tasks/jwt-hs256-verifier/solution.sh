#!/bin/bash
cat > /app/jwtcheck.py <<'PY'
import base64, hashlib, hmac, json, re


class InvalidToken(Exception):
    pass


_SEG = re.compile(r"[A-Za-z0-9_-]*")


def _b64(seg):
    if not _SEG.fullmatch(seg) or len(seg) % 4 == 1:
        raise InvalidToken("bad base64url")
    try:
        return base64.urlsafe_b64decode(seg + "=" * (-len(seg) % 4))
    except Exception:
        raise InvalidToken("bad base64url")


def _obj(seg):
    try:
        v = json.loads(_b64(seg).decode("utf-8"))
    except InvalidToken:
        raise
    except Exception:
        raise InvalidToken("bad json")
    if not isinstance(v, dict):
        raise InvalidToken("not an object")
    return v


def _int(v):
    return isinstance(v, int) and not isinstance(v, bool)


def verify(token, keys, now):
    if not isinstance(token, str):
        raise InvalidToken("not a string")
    parts = token.split(".")
    if len(parts) != 3:
        raise InvalidToken("need 3 segments")
    h, p, s = parts
    header, claims, sig = _obj(h), _obj(p), _b64(s)
    if header.get("alg") != "HS256":
        raise InvalidToken("alg")
    kid = header.get("kid")
    if not isinstance(kid, str) or kid not in keys:
        raise InvalidToken("kid")
    want = hmac.new(keys[kid], f"{h}.{p}".encode("ascii"), hashlib.sha256).digest()
    if not hmac.compare_digest(want, sig):
        raise InvalidToken("signature")
    if not _int(claims.get("exp")) or not now < claims["exp"]:
        raise InvalidToken("exp")
    if "nbf" in claims and (not _int(claims["nbf"]) or now < claims["nbf"]):
        raise InvalidToken("nbf")
    if claims.get("iss") != "https://auth.example.com":
        raise InvalidToken("iss")
    aud = claims.get("aud")
    if not (aud == "api" or (isinstance(aud, list) and "api" in aud)):
        raise InvalidToken("aud")
    return claims
PY
