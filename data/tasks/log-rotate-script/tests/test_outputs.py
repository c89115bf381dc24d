import gzip
import os
import stat
import subprocess
import tempfile
from pathlib import Path


def rotate(d):
    r = subprocess.run(["/app/rotate.sh", str(d)], capture_output=True, text=True, timeout=30)
    assert r.returncode == 0, r.stderr


def gz(p):
    with gzip.open(p, "rt") as f:
        return f.read()


def test_first_rotation():
    with tempfile.TemporaryDirectory() as d:
        d = Path(d)
        (d / "app.log").write_text("line one\nline two\n")
        (d / "notes.txt").write_text("keep me\n")
        rotate(d)
        assert gz(d / "app.log.1.gz") == "line one\nline two\n"
        assert (d / "app.log").read_text() == ""
        assert (d / "notes.txt").read_text() == "keep me\n"
        assert sorted(os.listdir(d)) == ["app.log", "app.log.1.gz", "notes.txt"]


def test_shift_and_retention():
    with tempfile.TemporaryDirectory() as d:
        d = Path(d)
        for gen in range(1, 6):
            (d / "app.log").write_text(f"gen {gen}\n")
            (d / "db.log").write_text(f"db {gen}\n")
            rotate(d)
        assert sorted(os.listdir(d)) == sorted(
            [f"{n}.log{s}" for n in ("app", "db") for s in ("", ".1.gz", ".2.gz", ".3.gz")])
        assert [gz(d / f"app.log.{i}.gz") for i in (1, 2, 3)] == ["gen 5\n", "gen 4\n", "gen 3\n"]
        assert [gz(d / f"db.log.{i}.gz") for i in (1, 2, 3)] == ["db 5\n", "db 4\n", "db 3\n"]


def test_empty_skipped_and_mode_kept():
    with tempfile.TemporaryDirectory() as d:
        d = Path(d)
        (d / "idle.log").write_text("")
        (d / "idle.log.1.gz").write_bytes(gzip.compress(b"old\n"))
        (d / "web.log").write_text("GET /\n")
        os.chmod(d / "web.log", 0o640)
        rotate(d)
        assert sorted(os.listdir(d)) == ["idle.log", "idle.log.1.gz", "web.log", "web.log.1.gz"]
        assert gz(d / "idle.log.1.gz") == "old\n"
        assert stat.S_IMODE(os.stat(d / "web.log").st_mode) == 0o640
        assert (d / "web.log").read_text() == ""
