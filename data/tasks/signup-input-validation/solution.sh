#!/bin/bash
cat > /app/validate.py <<'PY'
import re

_USER = re.compile(r"[A-Za-z][A-Za-z0-9_]{2,19}")
_LOCAL = re.compile(r"[A-Za-z0-9._%+-]+")
_LABEL = re.compile(r"[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?")


def _email_ok(e):
    if not isinstance(e, str) or len(e) > 254 or e.count("@") != 1:
        return False
    local, dom = e.split("@")
    if not local or not _LOCAL.fullmatch(local) or local[0] == "." or local[-1] == ".":
        return False
    labels = dom.split(".")
    if len(labels) < 2 or not all(_LABEL.fullmatch(l) for l in labels):
        return False
    return re.fullmatch(r"[A-Za-z]{2,}", labels[-1]) is not None


def validate_signup(form):
    if not isinstance(form, dict):
        form = {}
    errs = {}
    u = form.get("username")
    if not (isinstance(u, str) and _USER.fullmatch(u)):
        errs["username"] = "invalid_username"
    if not _email_ok(form.get("email")):
        errs["email"] = "invalid_email"
    p = form.get("password")
    ok = (isinstance(p, str) and 12 <= len(p) <= 128 and re.search(r"[a-z]", p) and re.search(r"[A-Z]", p)
          and re.search(r"[0-9]", p))
    if ok and isinstance(u, str) and u and u.lower() in p.lower():
        ok = False
    if not ok:
        errs["password"] = "weak_password"
    a = form.get("age")
    if not (type(a) is int and 13 <= a <= 120):
        errs["age"] = "invalid_age"
    return errs
PY
