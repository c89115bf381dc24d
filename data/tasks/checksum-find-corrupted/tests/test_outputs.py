import hashlib


def test_corrupted_list():
    lines = [l.strip() for l in open("/app/corrupted.txt").read().splitlines() if l.strip()]
    assert lines == ["LICENSE", "firmware v3.bin", "installer.sh"]
    data = hashlib.sha512(b"README.md").digest() * 14
    assert open("/app/downloads/README.md", "rb").read() == data
