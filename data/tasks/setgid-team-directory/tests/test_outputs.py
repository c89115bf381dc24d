import grp
import os
import pwd
import stat
import subprocess

S = "/srv/analytics"
GID = grp.getgrnam("analytics").gr_gid


def owner(p):
    return pwd.getpwuid(os.lstat(p).st_uid).pw_name


def test_directories():
    for d in [S, f"{S}/reports", f"{S}/reports/2024", f"{S}/raw"]:
        st = os.lstat(d)
        assert stat.S_IMODE(st.st_mode) == 0o2770, d
        assert st.st_gid == GID, d
    assert owner(S) == "root"
    assert owner(f"{S}/reports") == "ann" and owner(f"{S}/raw") == "ben"


def test_files():
    files = {f"{S}/notes.md": ("ann", "notes\n"), f"{S}/reports/2024/q1.csv": ("ann", "q1\n"),
             f"{S}/raw/export.json": ("ben", "dump\n")}
    for p, (user, text) in files.items():
        st = os.lstat(p)
        assert stat.S_IMODE(st.st_mode) == 0o660, p
        assert st.st_gid == GID, p
        assert owner(p) == user
        assert open(p).read() == text


def test_behaviour():
    r = subprocess.run(["su", "ben", "-c", f"umask 007; touch {S}/reports/ben-new.txt; mkdir {S}/reports/bendir"],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert os.stat(f"{S}/reports/ben-new.txt").st_gid == GID
    st = os.stat(f"{S}/reports/bendir")
    assert st.st_gid == GID and st.st_mode & stat.S_ISGID
    r = subprocess.run(["su", "eve", "-c", f"ls {S}"], capture_output=True, text=True)
    assert r.returncode != 0
