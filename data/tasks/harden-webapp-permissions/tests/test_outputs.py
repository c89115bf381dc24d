import grp
import os
import pwd
import stat

S = "/app/site"


def info(rel):
    st = os.lstat(os.path.join(S, rel))
    return pwd.getpwuid(st.st_uid).pw_name, grp.getgrgid(st.st_gid).gr_name, stat.S_IMODE(st.st_mode)


def test_default_policy():
    for rel in ["", "public", "public/css", "lib", "config", "bin"]:
        assert info(rel) == ("root", "root", 0o755), rel
    for rel in ["config/app.ini", "public/index.html", "public/css/site.css", "lib/util.py"]:
        assert info(rel) == ("root", "root", 0o644), rel


def test_special_paths():
    assert info("bin/start.sh") == ("root", "www-data", 0o750)
    assert info("bin/worker") == ("root", "www-data", 0o750)
    assert info("config/secrets.env") == ("root", "www-data", 0o640)
    for rel in ["data", "data/uploads", "data/uploads/2024"]:
        assert info(rel) == ("www-data", "www-data", 0o770), rel
    for rel in ["data/app.sqlite", "data/uploads/2024/a.png"]:
        assert info(rel) == ("www-data", "www-data", 0o660), rel


def test_backups_removed_contents_kept():
    for rel in ["config/app.ini.bak", "public/css/site.css~", "lib/.util.py.swp"]:
        assert not os.path.lexists(os.path.join(S, rel)), rel
    n = 0
    for dp, dns, fns in os.walk(S):
        for x in dns + fns:
            assert not os.lstat(os.path.join(dp, x)).st_mode & (stat.S_ISUID | stat.S_ISGID | stat.S_ISVTX)
            n += 1
    assert n == 17, n
    assert open(S + "/config/secrets.env").read() == "DB_PASSWORD=s3cr3t\n"
    assert open(S + "/bin/worker").read() == "#!/bin/sh\necho worker\n"
    assert open(S + "/data/uploads/2024/a.png").read() == "upload\n"
