import random
import subprocess
import zlib


def build():
    r = subprocess.run(["make", "-B", "-C", "/app"], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr


def adler(*paths):
    return subprocess.run(["/app/adler", *map(str, paths)], capture_output=True, text=True, timeout=30)


def test_binary_files(tmp_path):
    build()
    rng = random.Random(7)
    blobs = {"rand.bin": bytes(rng.randrange(256) for _ in range(300000)),
             "ff.bin": b"abc\xff\xffdef\xff",
             "utf8.txt": "naïve café ☕ – ok\n".encode() * 50,
             "high.bin": bytes(range(128, 256)) * 40}
    paths = []
    for name, data in blobs.items():
        p = tmp_path / name
        p.write_bytes(data)
        paths.append(p)
    r = adler(*paths)
    assert r.returncode == 0
    assert r.stdout.splitlines() == [f"{zlib.adler32(blobs[p.name]):08x}  {p}" for p in paths]


def test_ascii_and_missing(tmp_path):
    build()
    p = tmp_path / "w.txt"
    p.write_bytes(b"Wikipedia")
    e = tmp_path / "empty"
    e.write_bytes(b"")
    r = adler(p, tmp_path / "nope", e)
    assert r.returncode == 1
    assert r.stdout.splitlines() == [f"11e60398  {p}", f"00000001  {e}"]
    assert "nope" in r.stderr
    h = tmp_path / "h.bin"
    data = bytes([0x80, 0xFE])
    h.write_bytes(data)
    assert adler(h).stdout == f"{zlib.adler32(data):08x}  {h}\n"
