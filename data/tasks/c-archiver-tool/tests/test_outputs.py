import os
import struct
import subprocess
import tempfile
import zlib
from pathlib import Path

import pytest

# The program must be C (no wrapper around a script): it is tested where `python3` and `perl` are not available.
HIDDEN_INTERPRETERS = ["/usr/bin/python3", "/usr/bin/perl", "/usr/bin/perl5.36.0"]


@pytest.fixture(scope="module", autouse=True)
def no_interpreters():
    moved = []
    try:
        for p in HIDDEN_INTERPRETERS:
            if os.path.lexists(p):
                os.rename(p, p + ".hidden-by-tests")
                moved.append(p)
        yield
    finally:
        for p in moved:
            os.rename(p + ".hidden-by-tests", p)


_built = []


def sar(*args, cwd=None):
    if not _built:
        r = subprocess.run(["make", "-C", "/app/sar"], capture_output=True, text=True, timeout=180)
        assert r.returncode == 0, r.stdout + r.stderr
        with open("/app/sar/sar", "rb") as f:
            assert f.read(4) == b"\x7fELF"
        _built.append(1)
    return subprocess.run(["/app/sar/sar", *args], cwd=cwd, capture_output=True, timeout=60)


def read_archive(data):
    assert data[:4] == b"SAR1"
    (count,) = struct.unpack_from("<I", data, 4)
    pos, out = 8, []
    for _ in range(count):
        (plen,) = struct.unpack_from("<H", data, pos)
        pos += 2
        path = data[pos:pos + plen].decode()
        pos += plen
        typ, mode, size, crc = struct.unpack_from("<BIQI", data, pos)
        pos += 17
        body = data[pos:pos + size]
        pos += size
        out.append((path, typ, mode, body, crc))
    assert pos == len(data)
    return out


def write_archive(entries, count=None):
    out = b"SAR1" + struct.pack("<I", len(entries) if count is None else count)
    for path, typ, mode, body, *crc in entries:
        p = path.encode()
        c = crc[0] if crc else (zlib.crc32(body) if typ == 0 else 0)
        out += struct.pack("<H", len(p)) + p + struct.pack("<BIQI", typ, mode, len(body), c) + body
    return out


def make_tree():
    d = tempfile.mkdtemp()
    Path(d, "proj/src/b").mkdir(parents=True)
    Path(d, "proj/src/b/z.txt").write_text("zed\n")
    Path(d, "proj/src/a.c").write_text("int main(void){return 0;}\n")
    Path(d, "proj/src/B.h").write_text("#define B\n")
    Path(d, "proj/empty").mkdir()
    Path(d, "proj/bin.dat").write_bytes(bytes(range(256)) * 300)
    Path(d, "proj/run.sh").write_text("#!/bin/sh\necho hi\n")
    os.chmod(Path(d, "proj/run.sh"), 0o750)
    os.chmod(Path(d, "proj/empty"), 0o700)
    os.symlink("src/a.c", Path(d, "proj/link.c"))
    Path(d, "top.txt").write_text("top\n")
    return d


def test_create_byte_format():
    d = make_tree()
    r = sar("c", "out.sar", "./proj/", "top.txt", cwd=d)
    assert r.returncode == 0, r.stderr
    entries = read_archive(Path(d, "out.sar").read_bytes())
    assert [(p, t) for p, t, *_ in entries] == [
        ("proj", 1), ("proj/bin.dat", 0), ("proj/empty", 1), ("proj/run.sh", 0), ("proj/src", 1),
        ("proj/src/B.h", 0), ("proj/src/a.c", 0), ("proj/src/b", 1), ("proj/src/b/z.txt", 0), ("top.txt", 0)]
    by = {p: (t, m, b, c) for p, t, m, b, c in entries}
    assert by["proj/bin.dat"][2] == bytes(range(256)) * 300
    assert by["proj/bin.dat"][3] == zlib.crc32(bytes(range(256)) * 300)
    assert by["proj/run.sh"][1] == 0o750 and by["proj/empty"][1] == 0o700
    assert by["proj/empty"][2:] == (b"", 0)
    assert by["top.txt"][2:] == (b"top\n", zlib.crc32(b"top\n"))
    for bad in ("/etc/hostname", "proj/../top.txt"):
        assert sar("c", "bad.sar", bad, cwd=d).returncode == 1


def test_list_and_extract():
    data = write_archive([("docs", 1, 0o755, b""), ("docs/readme.md", 0, 0o644, b"# hi\n"),
                          ("docs/deep/x.bin", 0, 0o600, bytes(1000)), ("tool", 0, 0o755, b"#!/bin/sh\n")])
    d = tempfile.mkdtemp()
    Path(d, "a.sar").write_bytes(data)
    r = sar("t", "a.sar", cwd=d)
    assert r.returncode == 0
    assert r.stdout.decode() == "d 755 0 docs\nf 644 5 docs/readme.md\nf 600 1000 docs/deep/x.bin\nf 755 10 tool\n"
    r = sar("x", "a.sar", "out/sub", cwd=d)
    assert r.returncode == 0, r.stderr
    o = Path(d, "out/sub")
    assert (o / "docs/readme.md").read_bytes() == b"# hi\n"
    assert (o / "docs/deep/x.bin").read_bytes() == bytes(1000)
    assert os.stat(o / "docs/deep/x.bin").st_mode & 0o777 == 0o600
    assert os.stat(o / "tool").st_mode & 0o777 == 0o755
    src = make_tree()
    assert sar("c", "rt.sar", "proj", cwd=src).returncode == 0
    r = sar("x", os.path.join(src, "rt.sar"), cwd=d)
    assert r.returncode == 0, r.stderr
    assert Path(d, "proj/src/b/z.txt").read_text() == "zed\n"
    assert Path(d, "proj/bin.dat").read_bytes() == bytes(range(256)) * 300
    assert not Path(d, "proj/link.c").exists()


def test_rejects_bad_archives():
    good = [("ok.txt", 0, 0o644, b"fine\n")]
    bad_archives = [
        write_archive(good + [("../escape.txt", 0, 0o644, b"x")]),
        write_archive(good + [("/abs.txt", 0, 0o644, b"x")]),
        write_archive(good + [("a/./b", 0, 0o644, b"x")]),
        write_archive(good + [("crc.txt", 0, 0o644, b"data", 12345)]),
        write_archive(good + [("t.txt", 7, 0o644, b"x")]),
        write_archive(good + [("last.txt", 0, 0o644, b"0123456789")])[:-3],
        write_archive(good) + b"junk",
        write_archive(good, count=2),
        b"SAR2" + write_archive(good)[4:],
    ]
    for i, data in enumerate(bad_archives):
        d = tempfile.mkdtemp()
        Path(d, "bad.sar").write_bytes(data)
        r = sar("x", "bad.sar", "out", cwd=d)
        assert r.returncode == 1 and r.stderr.startswith(b"sar: "), i
        assert not Path(d, "out/ok.txt").exists() and not Path(d, "escape.txt").exists(), i
        assert sar("t", "bad.sar", cwd=d).returncode == 1, i
    d = tempfile.mkdtemp()
    Path(d, "good.sar").write_bytes(write_archive(good))
    assert sar("x", "good.sar", cwd=d).returncode == 0 and Path(d, "ok.txt").read_text() == "fine\n"
