import os
import tarfile
from pathlib import Path

A = Path("/app/archive")
GOOD = ["logs-2024-01", "logs-2024-02"]
BAD = ["site-backup", "db-dump"]


def expected_members(n):
    files = {f"{n}/part{i}.txt": "".join(f"{n} file {i} line {k}\n" for k in range(1, i * 200 + 1)) for i in (1, 2, 3)}
    files[f"{n}/sub/nested.txt"] = f"{n} nested\n"
    return files


def test_good_archives_converted():
    for n in GOOD:
        assert not (A / f"{n}.tar.gz").exists()
        assert (A / f"{n}.tar.xz").read_bytes()[:6] == b"\xfd7zXZ\x00"
        with tarfile.open(A / f"{n}.tar.xz", "r:xz") as tf:
            files = {m.name: tf.extractfile(m).read().decode() for m in tf.getmembers() if m.isfile()}
            dirs = sorted(m.name.rstrip("/") for m in tf.getmembers() if m.isdir())
        assert files == expected_members(n)
        assert dirs == [n, f"{n}/sub"]


def test_corrupt_reported_and_kept():
    got = [l.strip() for l in Path("/app/corrupt.txt").read_text().splitlines() if l.strip()]
    assert sorted(got) == sorted(f"{n}.tar.gz" for n in BAD)
    for n in BAD:
        assert (A / f"{n}.tar.gz").exists()
        assert not (A / f"{n}.tar.xz").exists()
    assert os.path.getsize(A / "site-backup.tar.gz") == 600
    assert sorted(os.listdir(A)) == sorted([f"{n}.tar.xz" for n in GOOD] + [f"{n}.tar.gz" for n in BAD])
