import grp
import os
import pwd

USERS = {
    "jdoe": (1201, "John Doe", "/bin/bash", ["developers", "docker"]),
    "asmith": (1202, "Anna Smith", "/bin/bash", ["developers"]),
    "mlopez": (1203, "Maria Lopez", "/bin/sh", ["ops", "docker", "developers"]),
    "svc-backup": (1290, "Backup Service", "/usr/sbin/nologin", []),
}


def test_passwd_entries():
    for u, (uid, name, shell, _) in USERS.items():
        p = pwd.getpwnam(u)
        assert (p.pw_uid, p.pw_gid, p.pw_gecos, p.pw_dir, p.pw_shell) == (uid, uid, name, f"/home/{u}", shell)
    o = pwd.getpwnam("olduser")
    assert (o.pw_uid, o.pw_dir, o.pw_shell) == (1100, "/home/olduser", "/bin/bash")


def test_primary_groups():
    for u, (uid, *_ ) in USERS.items():
        g = grp.getgrnam(u)
        assert g.gr_gid == uid
        assert [x.gr_name for x in grp.getgrall() if x.gr_gid == uid] == [u]


def test_supplementary_groups():
    expected = {"developers": {"jdoe", "asmith", "mlopez"}, "docker": {"jdoe", "mlopez", "olduser"}, "ops": {"mlopez"}}
    for g, members in expected.items():
        assert set(grp.getgrnam(g).gr_mem) == members, g
    assert grp.getgrnam("docker").gr_gid == 999
    for g in ["developers", "ops"]:
        assert grp.getgrnam(g).gr_gid < 1000
    for u in USERS:
        extra = {g.gr_name for g in grp.getgrall() if u in g.gr_mem}
        assert extra == set(USERS[u][3]), u


def test_home_directories():
    for u, (uid, *_ ) in USERS.items():
        h = f"/home/{u}"
        st = os.stat(h)
        assert (st.st_uid, st.st_gid) == (uid, uid)
        assert os.path.isfile(f"{h}/.bashrc") and os.stat(f"{h}/.bashrc").st_uid == uid
    assert os.path.isdir("/home/olduser")
