import hashlib
import subprocess


def test_signature_verifies():
    art = "/app/release/app-2.1.0.tar.gz"
    expected = b"".join(hashlib.sha256(b"%d" % i).digest() for i in range(3000))
    assert open(art, "rb").read() == expected
    # the verification key must still be the public half of the release key (not swapped for another key pair)
    derived = subprocess.run(["openssl", "pkey", "-in", "/app/keys/release.key", "-pubout"], capture_output=True, text=True)
    assert derived.returncode == 0 and derived.stdout == open("/app/keys/release.pub").read()
    r = subprocess.run(["openssl", "dgst", "-sha256", "-verify", "/app/keys/release.pub", "-signature",
                        art + ".sig", art], capture_output=True, text=True)
    assert r.returncode == 0 and "Verified OK" in r.stdout, r.stdout + r.stderr
    # a signature over something else must not be accepted (guards against signing a different file)
    r2 = subprocess.run(["openssl", "dgst", "-sha256", "-verify", "/app/keys/release.pub", "-signature",
                         art + ".sig", "/app/keys/release.pub"], capture_output=True, text=True)
    assert r2.returncode != 0
