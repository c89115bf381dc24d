import os
import pwd
import stat


def check(path, user, mode):
    st = os.lstat(path)
    p = pwd.getpwnam(user)
    assert (st.st_uid, st.st_gid) == (p.pw_uid, p.pw_gid), path
    assert stat.S_IMODE(st.st_mode) == mode, (path, oct(st.st_mode))


def test_home_dirs():
    for u in ["kim", "lee"]:
        check(f"/home/{u}", u, 0o755)
    assert os.path.isfile("/home/kim/.bashrc")


def test_ssh_dirs():
    for u in ["kim", "lee"]:
        check(f"/home/{u}/.ssh", u, 0o700)


def test_ssh_files():
    for u in ["kim", "lee"]:
        check(f"/home/{u}/.ssh/authorized_keys", u, 0o600)
        assert open(f"/home/{u}/.ssh/authorized_keys").read() == f"ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAI{u} {u}@laptop\n"
    check("/home/lee/.ssh/id_ed25519", "lee", 0o600)
    check("/home/lee/.ssh/id_ed25519.pub", "lee", 0o644)
    check("/home/lee/.ssh/known_hosts", "lee", 0o644)
    assert "lee-secret" in open("/home/lee/.ssh/id_ed25519").read()
    assert sorted(os.listdir("/home/lee/.ssh")) == ["authorized_keys", "id_ed25519", "id_ed25519.pub", "known_hosts"]
