import os
import pwd
import tarfile

ARCH = "/app/backup/home.tar.gz"


def members():
    with tarfile.open(ARCH, "r:gz") as tf:
        return {m.name.rstrip("/"): m for m in tf.getmembers()}


def test_members():
    m = members()
    files = sorted(n for n, x in m.items() if x.isfile())
    exp = []
    for u in ["nina", "omar"]:
        exp += [f"home/{u}/projects/web/app.js", f"home/{u}/docs/cv.txt", f"home/{u}/.config/app/settings.ini",
                f"home/{u}/.bashrc", f"home/{u}/.profile", f"home/{u}/.bash_logout"]
    assert files == sorted(exp)
    assert not any(".cache" in n.split("/") or "node_modules" in n.split("/") or n.endswith(".tmp") for n in m)
    assert "home/nina/projects/web" in m and m["home/nina/projects/web"].isdir()


def test_metadata():
    m = members()
    nina, omar = pwd.getpwnam("nina"), pwd.getpwnam("omar")
    cv = m["home/nina/docs/cv.txt"]
    assert (cv.uid, cv.gid, cv.mode & 0o7777) == (nina.pw_uid, nina.pw_gid, 0o600)
    d = m["home/omar/docs"]
    assert d.isdir() and (d.uid, d.mode & 0o7777) == (omar.pw_uid, 0o700)
    link = m["home/omar/resume"]
    assert link.issym() and link.linkname == "docs/cv.txt"
    with tarfile.open(ARCH, "r:gz") as tf:
        assert tf.extractfile("home/omar/projects/web/app.js").read() == b"omar code\n"


def test_home_untouched():
    m = members()
    assert m["home/nina/docs/cv.txt"].isfile() and m["home/omar/.config/app/settings.ini"].isfile()
    for u in ["nina", "omar"]:
        assert open(f"/home/{u}/projects/web/build.tmp").read() == "scratch\n"
        assert open(f"/home/{u}/.cache/pip/wheel.bin").read() == "cached\n"
        assert os.path.islink(f"/home/{u}/resume")
