import hashlib
import os

EXPECTED_SHA = "27430c81caedc12c41f8488f51f18e02ab58efb4c2fa025e6df6e4e0181cd47f"


def test_chunk_names_and_sizes():
    names = sorted(os.listdir("/app/chunks"))
    assert names == ["server_00", "server_01", "server_02", "server_03", "server_04"]
    counts = [open("/app/chunks/" + n, "rb").read().count(b"\n") for n in names]
    assert counts == [1000, 1000, 1000, 1000, 321]


def test_chunks_rebuild_original():
    names = sorted(os.listdir("/app/chunks"))
    data = b"".join(open("/app/chunks/" + n, "rb").read() for n in names)
    assert hashlib.sha256(data).hexdigest() == EXPECTED_SHA
    assert hashlib.sha256(open("/app/server.log", "rb").read()).hexdigest() == EXPECTED_SHA
