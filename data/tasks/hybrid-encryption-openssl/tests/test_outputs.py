import os
import struct
import subprocess

import pytest

W = "/tmp/seal_test"


@pytest.fixture(scope="module")
def keys():
    os.makedirs(W, exist_ok=True)
    for n in ["a", "b"]:
        subprocess.run(["openssl", "genpkey", "-algorithm", "RSA", "-pkeyopt", "rsa_keygen_bits:2048", "-out", f"{W}/{n}.key"], check=True, capture_output=True)
        subprocess.run(["openssl", "pkey", "-in", f"{W}/{n}.key", "-pubout", "-out", f"{W}/{n}.pub"], check=True, capture_output=True)
    return W


OAEP = ["-pkeyopt", "rsa_padding_mode:oaep", "-pkeyopt", "rsa_oaep_md:sha256", "-pkeyopt", "rsa_mgf1_md:sha256"]


def ref_open(priv, path):
    data = open(path, "rb").read()
    (n,) = struct.unpack(">I", data[:4])
    open(f"{W}/ek", "wb").write(data[4:4 + n])
    iv, ct = data[4 + n:20 + n], data[20 + n:]
    subprocess.run(["openssl", "pkeyutl", "-decrypt", "-inkey", priv, *OAEP, "-in", f"{W}/ek", "-out", f"{W}/k"], check=True, capture_output=True)
    key = open(f"{W}/k", "rb").read()
    assert len(key) == 32
    open(f"{W}/ct", "wb").write(ct)
    subprocess.run(["openssl", "enc", "-d", "-aes-256-cbc", "-K", key.hex(), "-iv", iv.hex(), "-in", f"{W}/ct", "-out", f"{W}/pt"], check=True, capture_output=True)
    return open(f"{W}/pt", "rb").read(), iv


def ref_seal(pub, plain, out):
    key, iv = os.urandom(32), os.urandom(16)
    open(f"{W}/k", "wb").write(key)
    open(f"{W}/p", "wb").write(plain)
    subprocess.run(["openssl", "pkeyutl", "-encrypt", "-pubin", "-inkey", pub, *OAEP, "-in", f"{W}/k", "-out", f"{W}/ek"], check=True, capture_output=True)
    subprocess.run(["openssl", "enc", "-aes-256-cbc", "-K", key.hex(), "-iv", iv.hex(), "-in", f"{W}/p", "-out", f"{W}/c"], check=True, capture_output=True)
    ek = open(f"{W}/ek", "rb").read()
    open(out, "wb").write(struct.pack(">I", len(ek)) + ek + iv + open(f"{W}/c", "rb").read())


def tool(name, *args):
    return subprocess.run([f"/app/{name}", *args], capture_output=True, timeout=60)


def test_inbox_message():
    assert open("/app/inbox/message.txt", "rb").read() == (
        b"Meet at the usual place at 21:00.\nBring the blue folder.\nPassphrase: orchid-lantern-93\n")


def test_seal_matches_format(keys):
    for i, plain in enumerate([b"hello world\n", b"", os.urandom(100000), bytes(range(256)) * 3]):
        open(f"{W}/in{i}", "wb").write(plain)
        assert tool("seal", f"{W}/a.pub", f"{W}/in{i}", f"{W}/s{i}").returncode == 0
        got, iv1 = ref_open(f"{W}/a.key", f"{W}/s{i}")
        assert got == plain
    assert tool("seal", f"{W}/a.pub", f"{W}/in0", f"{W}/s0b").returncode == 0
    assert open(f"{W}/s0", "rb").read() != open(f"{W}/s0b", "rb").read()
    assert ref_open(f"{W}/a.key", f"{W}/s0")[1] != ref_open(f"{W}/a.key", f"{W}/s0b")[1]


def test_unseal_reference_files(keys):
    for i, plain in enumerate([b"top secret", b"", os.urandom(65537)]):
        ref_seal(f"{W}/b.pub", plain, f"{W}/r{i}")
        r = tool("unseal", f"{W}/b.key", f"{W}/r{i}", f"{W}/o{i}")
        assert r.returncode == 0, r.stderr
        assert open(f"{W}/o{i}", "rb").read() == plain


def test_wrong_key_fails(keys):
    ref_seal(f"{W}/a.pub", b"for a only, quite long plaintext " * 10, f"{W}/w")
    r = tool("unseal", f"{W}/b.key", f"{W}/w", f"{W}/wo")
    assert r.returncode != 0
    assert not os.path.exists(f"{W}/wo") or b"for a only" not in open(f"{W}/wo", "rb").read()
    assert tool("unseal", f"{W}/a.key", f"{W}/w", f"{W}/wa").returncode == 0
    assert open(f"{W}/wa", "rb").read() == b"for a only, quite long plaintext " * 10
