#!/bin/bash
cat > /app/signing.py <<'PY'
import hashlib, hmac, re

_RE = re.compile(r"([^?]+)\?expires=(\d+)&sig=([0-9a-f]{64})")


def _key():
    with open("/app/url.key", "rb") as f:
        return f.read()


def _sig(path, expires):
    return hmac.new(_key(), f"{path}\n{expires}".encode(), hashlib.sha256).hexdigest()


def sign(path, expires):
    return f"{path}?expires={int(expires)}&sig={_sig(path, int(expires))}"


def verify(url, now):
    try:
        m = _RE.fullmatch(url)
        if not m:
            return False
        path, exp, sig = m.group(1), int(m.group(2)), m.group(3)
        return hmac.compare_digest(_sig(path, exp), sig) and now < exp
    except Exception:
        return False
PY
