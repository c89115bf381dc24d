import io
import os
import shutil
import stat
import subprocess
import tarfile

import pytest


def build(path, members, mode="w"):
    with tarfile.open(path, mode) as t:
        for m in members:
            kind, name = m[0], m[1]
            ti = tarfile.TarInfo(name)
            if kind == "file":
                data = m[2].encode()
                ti.size, ti.mode = len(data), (m[3] if len(m) > 3 else 0o644)
                t.addfile(ti, io.BytesIO(data))
            elif kind == "dir":
                ti.type, ti.mode = tarfile.DIRTYPE, 0o755
                t.addfile(ti)
            elif kind == "sym":
                ti.type, ti.linkname = tarfile.SYMTYPE, m[2]
                t.addfile(ti)
            elif kind == "hard":
                ti.type, ti.linkname = tarfile.LNKTYPE, m[2]
                t.addfile(ti)
            elif kind == "fifo":
                ti.type = tarfile.FIFOTYPE
                t.addfile(ti)


@pytest.fixture()
def work(tmp_path):
    os.makedirs("/tmp/victim", exist_ok=True)
    for f in os.listdir("/tmp/victim"):
        os.remove(os.path.join("/tmp/victim", f))
    yield tmp_path
    shutil.rmtree("/tmp/victim", ignore_errors=True)


def run(arc, dest):
    r = subprocess.run(["python3", "/app/safe_extract.py", str(arc), str(dest)], capture_output=True, text=True, timeout=30)
    return r.returncode, [l for l in r.stdout.splitlines() if l.strip()]


def test_benign_archive(work):
    arc = work / "ok.tar.gz"
    build(arc, [("dir", "site"), ("file", "site/index.html", "<h1>hi</h1>"), ("file", "site/css/a.css", "a{}"),
                ("file", "./notes/../readme.txt", "read me"), ("sym", "site/home.html", "index.html"),
                ("sym", "site/css/up.html", "../index.html")], "w:gz")
    dest = work / "out"
    rc, skipped = run(arc, dest)
    assert (rc, skipped) == (0, [])
    assert (dest / "site/index.html").read_text() == "<h1>hi</h1>"
    assert (dest / "site/css/a.css").read_text() == "a{}"
    assert (dest / "readme.txt").read_text() == "read me"
    assert os.readlink(dest / "site/home.html") == "index.html"
    assert (dest / "site/css/up.html").read_text() == "<h1>hi</h1>"


def test_traversal_and_absolute_blocked(work):
    arc = work / "evil.tar"
    build(arc, [("file", "good.txt", "good"), ("file", "../../../../tmp/victim/pwn1", "x"),
                ("file", "/tmp/victim/pwn2", "x"), ("file", "a/../../victim3", "x"),
                ("hard", "hl", "/etc/passwd"), ("fifo", "pipe"), ("file", "b/ok.txt", "ok")])
    dest = work / "d"
    rc, skipped = run(arc, dest)
    assert rc == 3
    assert skipped == ["../../../../tmp/victim/pwn1", "/tmp/victim/pwn2", "a/../../victim3", "hl", "pipe"]
    assert os.listdir("/tmp/victim") == [] and not (work / "victim3").exists()
    assert (dest / "good.txt").read_text() == "good" and (dest / "b/ok.txt").read_text() == "ok"
    assert not (dest / "hl").exists() and not (dest / "pipe").exists()


def test_symlink_attacks_blocked(work):
    arc = work / "sym.tar.bz2"
    build(arc, [("sym", "esc", "/tmp/victim"), ("file", "esc/pwn4", "x"), ("sym", "rel", "../../../../../tmp/victim"),
                ("sym", "inner", "sub"), ("dir", "sub"), ("file", "inner/pwn5", "x"), ("file", "sub/fine.txt", "fine"),
                ("sym", "deep/link", "../../outside")], "w:bz2")
    dest = work / "s"
    rc, skipped = run(arc, dest)
    assert rc == 3
    # esc/pwn4 may be skipped or written to a real DEST/esc directory (the esc link itself was skipped)
    assert [n for n in skipped if n != "esc/pwn4"] == ["esc", "rel", "inner/pwn5", "deep/link"]
    assert os.listdir("/tmp/victim") == []
    assert os.readlink(dest / "inner") == "sub" and not (dest / "sub/pwn5").exists()
    assert (dest / "sub/fine.txt").read_text() == "fine"
    # a link that already exists in DEST is not followed either
    os.symlink("/tmp/victim", dest / "pre")
    arc2 = work / "pre.tar"
    build(arc2, [("file", "pre/pwn6", "x"), ("file", "top.txt", "t")])
    rc, skipped = run(arc2, dest)
    assert (rc, skipped) == (3, ["pre/pwn6"]) and os.listdir("/tmp/victim") == []
    assert (dest / "top.txt").read_text() == "t"


def test_modes_and_bad_archive(work):
    arc = work / "m.tar"
    build(arc, [("file", "suid", "s", 0o4777), ("file", "exe", "e", 0o755), ("file", "gw", "g", 0o2666)])
    dest = work / "m"
    rc, skipped = run(arc, dest)
    assert (rc, skipped) == (0, [])
    assert stat.S_IMODE(os.stat(dest / "suid").st_mode) == 0o755
    assert stat.S_IMODE(os.stat(dest / "exe").st_mode) == 0o755
    assert stat.S_IMODE(os.stat(dest / "gw").st_mode) == 0o644
    bad = work / "bad.tar"
    bad.write_bytes(b"this is not a tar archive at all" * 40)
    rc, _ = run(bad, work / "b")
    assert rc == 1
