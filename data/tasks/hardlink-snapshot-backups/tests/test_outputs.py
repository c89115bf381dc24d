import os
import stat
import subprocess
import tempfile

SNAP = "/app/snapshot"


def make_src(base):
    src = os.path.join(base, "src")
    os.makedirs(f"{src}/docs/deep dir")
    files = {"docs/a.txt": "alpha\n", "docs/deep dir/my notes.md": "notes\n", "b.bin": "b" * 5000,
             "c.txt": "charlie\n", "gone.txt": "to be deleted\n"}
    for rel, text in files.items():
        with open(f"{src}/{rel}", "w") as f:
            f.write(text)
        os.utime(f"{src}/{rel}", (1700000000, 1700000000))
    os.chmod(f"{src}/c.txt", 0o600)
    os.chmod(f"{src}/docs", 0o750)
    os.symlink("docs/a.txt", f"{src}/link-to-a")
    return src


def run(*args):
    return subprocess.run([SNAP, *args], capture_output=True, text=True, timeout=60)


def ino(p):
    return os.lstat(p).st_ino


def test_first_snapshot_copy():
    base = tempfile.mkdtemp()
    src = make_src(base)
    r = run(src, f"{base}/backups", "s1")
    assert r.returncode == 0, r.stderr
    s1 = f"{base}/backups/s1"
    assert open(f"{s1}/docs/deep dir/my notes.md").read() == "notes\n"
    assert open(f"{s1}/b.bin").read() == "b" * 5000
    assert os.readlink(f"{s1}/link-to-a") == "docs/a.txt"
    assert stat.S_IMODE(os.stat(f"{s1}/c.txt").st_mode) == 0o600
    assert stat.S_IMODE(os.stat(f"{s1}/docs").st_mode) == 0o750
    assert int(os.stat(f"{s1}/docs/a.txt").st_mtime) == 1700000000
    for rel in ["docs/a.txt", "b.bin", "c.txt"]:
        assert ino(f"{s1}/{rel}") != ino(f"{src}/{rel}")


def test_incremental_links():
    base = tempfile.mkdtemp()
    src = make_src(base)
    assert run(src, f"{base}/bk", "day1").returncode == 0
    with open(f"{src}/c.txt", "w") as f:
        f.write("charlie v2 longer\n")
    with open(f"{src}/docs/a.txt", "w") as f:
        f.write("ALPHA\n")          # same size, new mtime
    os.remove(f"{src}/gone.txt")
    with open(f"{src}/docs/new.txt", "w") as f:
        f.write("new\n")
    r = run(src, f"{base}/bk", "day2")
    assert r.returncode == 0, r.stderr
    d1, d2 = f"{base}/bk/day1", f"{base}/bk/day2"
    assert ino(f"{d2}/b.bin") == ino(f"{d1}/b.bin")
    assert ino(f"{d2}/docs/deep dir/my notes.md") == ino(f"{d1}/docs/deep dir/my notes.md")
    assert ino(f"{d2}/c.txt") != ino(f"{d1}/c.txt") and ino(f"{d2}/docs/a.txt") != ino(f"{d1}/docs/a.txt")
    assert open(f"{d2}/docs/a.txt").read() == "ALPHA\n" and open(f"{d1}/docs/a.txt").read() == "alpha\n"
    assert open(f"{d2}/c.txt").read() == "charlie v2 longer\n" and open(f"{d1}/c.txt").read() == "charlie\n"
    assert not os.path.exists(f"{d2}/gone.txt") and os.path.exists(f"{d1}/gone.txt")
    assert open(f"{d2}/docs/new.txt").read() == "new\n"
    assert ino(f"{d2}/docs/new.txt") != ino(f"{src}/docs/new.txt")
    assert os.readlink(f"{d2}/link-to-a") == "docs/a.txt"


def test_latest_and_refuse_existing():
    base = tempfile.mkdtemp()
    src = make_src(base)
    assert run(src, f"{base}/bk", "one").returncode == 0
    assert os.path.islink(f"{base}/bk/latest")
    assert os.path.realpath(f"{base}/bk/latest") == os.path.realpath(f"{base}/bk/one")
    assert run(src, f"{base}/bk", "two").returncode == 0
    assert os.path.realpath(f"{base}/bk/latest") == os.path.realpath(f"{base}/bk/two")
    assert ino(f"{base}/bk/two/b.bin") == ino(f"{base}/bk/one/b.bin")
    with open(f"{src}/c.txt", "w") as f:
        f.write("changed\n")
    r = run(src, f"{base}/bk", "one")
    assert r.returncode != 0
    assert open(f"{base}/bk/one/c.txt").read() == "charlie\n"
    assert os.path.realpath(f"{base}/bk/latest") == os.path.realpath(f"{base}/bk/two")
