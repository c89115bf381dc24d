#!/bin/bash
cat > /app/verify_update.py <<'PY'
import hashlib, json, os, re, subprocess, sys


def ver(s):
    return [int(x) for x in s.split(".")]


def cmp(a, b):
    n = max(len(a), len(b))
    a, b = a + [0] * (n - len(a)), b + [0] * (n - len(b))
    return (a > b) - (a < b)


def check(d, pub, installed):
    man, sig = os.path.join(d, "manifest.json"), os.path.join(d, "manifest.json.sig")
    if not (os.path.isfile(man) and os.path.isfile(sig)):
        return "bad_signature"
    r = subprocess.run(["openssl", "dgst", "-sha256", "-verify", pub, "-signature", sig, man], capture_output=True)
    if r.returncode != 0:
        return "bad_signature"
    try:
        m = json.load(open(man))
        assert isinstance(m, dict) and isinstance(m.get("version"), str) and re.fullmatch(r"\d+(\.\d+)*", m["version"])
        assert isinstance(m.get("files"), dict)
        for p, h in m["files"].items():
            assert isinstance(h, str) and re.fullmatch(r"[0-9a-f]{64}", h)
            assert p and not p.startswith("/") and ".." not in p.split("/")
    except Exception:
        return "bad_manifest"
    if cmp(ver(m["version"]), ver(installed)) <= 0:
        return "rollback"
    for p in m["files"]:
        if not os.path.isfile(os.path.join(d, p)):
            return "missing_file"
    for p, h in m["files"].items():
        if hashlib.sha256(open(os.path.join(d, p), "rb").read()).hexdigest() != h:
            return "hash_mismatch"
    listed = {os.path.normpath(p) for p in m["files"]} | {"manifest.json", "manifest.json.sig"}
    for dp, dns, fns in os.walk(d):
        for f in fns:
            rel = os.path.relpath(os.path.join(dp, f), d)
            if rel not in listed:
                return "unlisted_file"
    return None


reason = check(*sys.argv[1:4])
print(reason or "OK")
sys.exit(1 if reason else 0)
PY
