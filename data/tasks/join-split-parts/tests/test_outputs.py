import hashlib


def test_backup_reassembled():
    data = b"".join(hashlib.sha256(b"block%d" % i).digest() for i in range(12 * 1000 + 17))
    with open("/app/restore/backup.bin", "rb") as f:
        got = f.read()
    assert len(got) == len(data)
    assert got == data
