import hashlib
import json
import os
import shutil
import subprocess

import pytest

W = "/tmp/upd_test"


@pytest.fixture(scope="module")
def keys():
    shutil.rmtree(W, ignore_errors=True)
    os.makedirs(W)
    for name in ["good", "evil"]:
        subprocess.run(["openssl", "genpkey", "-algorithm", "RSA", "-pkeyopt", "rsa_keygen_bits:2048", "-out", f"{W}/{name}.key"],
                       check=True, capture_output=True)
        subprocess.run(["openssl", "pkey", "-in", f"{W}/{name}.key", "-pubout", "-out", f"{W}/{name}.pub"], check=True, capture_output=True)
    return W


def bundle(name, files, version="3.0.0", key="good", manifest=None, extra=None):
    d = f"{W}/{name}"
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(d)
    for p, data in files.items():
        os.makedirs(os.path.dirname(f"{d}/{p}"), exist_ok=True)
        open(f"{d}/{p}", "wb").write(data)
    if manifest is None:
        manifest = json.dumps({"version": version, "files": {p: hashlib.sha256(v).hexdigest() for p, v in files.items()}})
    open(f"{d}/manifest.json", "w").write(manifest)
    subprocess.run(["openssl", "dgst", "-sha256", "-sign", f"{W}/{key}.key", "-out", f"{d}/manifest.json.sig", f"{d}/manifest.json"],
                   check=True, capture_output=True)
    for p, data in (extra or {}).items():
        os.makedirs(os.path.dirname(f"{d}/{p}"), exist_ok=True)
        open(f"{d}/{p}", "wb").write(data)
    return d


def run(d, installed="2.9.9", pub=None):
    r = subprocess.run(["python3", "/app/verify_update.py", d, pub or f"{W}/good.pub", installed], capture_output=True, text=True, timeout=60)
    return r.stdout.strip(), r.returncode


FILES = {"bin/app": b"\x7fELF binary", "lib/core.so": b"core" * 100, "README": b"read me\n"}


def test_sample_and_valid_bundles(keys):
    assert run("/app/sample_update", "2.3.9", "/app/keys/vendor_pub.pem") == ("OK", 0)
    assert run(bundle("v1", FILES, "3.0.0"), "2.9.9") == ("OK", 0)
    assert run(bundle("v2", FILES, "2.10"), "2.9") == ("OK", 0)
    assert run(bundle("v3", {}, "1.0.1"), "1") == ("OK", 0)


def test_signature_failures(keys):
    assert run(bundle("s0", FILES), "1.0") == ("OK", 0)
    assert run(bundle("s1", FILES, key="evil")) == ("bad_signature", 1)
    d = bundle("s2", FILES)
    m = open(f"{d}/manifest.json").read().replace("3.0.0", "3.0.1")
    open(f"{d}/manifest.json", "w").write(m)
    assert run(d) == ("bad_signature", 1)
    d = bundle("s3", FILES)
    os.remove(f"{d}/manifest.json.sig")
    assert run(d) == ("bad_signature", 1)
    assert run("/app/sample_update", "2.3.9", f"{W}/good.pub") == ("bad_signature", 1)


def test_manifest_and_rollback(keys):
    assert run(bundle("m0", FILES, "2.9.10"), "2.9.9") == ("OK", 0)
    assert run(bundle("m1", FILES, manifest="{not json")) == ("bad_manifest", 1)
    assert run(bundle("m2", FILES, manifest=json.dumps({"version": "3.x", "files": {}}))) == ("bad_manifest", 1)
    assert run(bundle("m3", FILES, manifest=json.dumps({"version": "3.0", "files": {"../etc/passwd": "0" * 64}}))) == ("bad_manifest", 1)
    assert run(bundle("m4", FILES, manifest=json.dumps({"version": "3.0", "files": {"/etc/passwd": "a" * 64}}))) == ("bad_manifest", 1)
    assert run(bundle("m5", FILES, manifest=json.dumps({"version": "3.0", "files": ["bin/app"]}))) == ("bad_manifest", 1)
    assert run(bundle("m6", FILES, manifest=json.dumps({"version": 3, "files": {}}))) == ("bad_manifest", 1)
    assert run(bundle("r1", FILES, "2.9.9"), "2.9.9") == ("rollback", 1)
    assert run(bundle("r2", FILES, "2.9"), "2.10") == ("rollback", 1)
    assert run(bundle("r3", FILES, "1.2"), "1.2.0") == ("rollback", 1)


def test_file_checks(keys):
    assert run(bundle("f0", FILES)) == ("OK", 0)
    d = bundle("f1", FILES)
    os.remove(f"{d}/lib/core.so")
    assert run(d) == ("missing_file", 1)
    d = bundle("f2", FILES)
    open(f"{d}/bin/app", "ab").write(b"backdoor")
    assert run(d) == ("hash_mismatch", 1)
    assert run(bundle("f3", FILES, extra={"bin/.hidden-hook": b"x"})) == ("unlisted_file", 1)
    assert run(bundle("f4", FILES, extra={"deep/er/run.sh": b"x"})) == ("unlisted_file", 1)
    d = bundle("f5", FILES, "1.0")
    os.remove(f"{d}/README")
    assert run(d, "1.0") == ("rollback", 1)
