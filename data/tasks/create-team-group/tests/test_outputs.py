import grp
import pwd


def test_group_created():
    g = grp.getgrnam("devs")
    assert g.gr_gid == 2100
    assert [x.gr_name for x in grp.getgrall() if x.gr_gid == 2100] == ["devs"]


def test_members():
    g = grp.getgrnam("devs")
    assert sorted(g.gr_mem) == ["alice", "carol"]
    assert grp.getgrnam("legacy").gr_mem == ["bob"]
    for u in ["alice", "bob", "carol"]:
        p = pwd.getpwnam(u)
        assert grp.getgrgid(p.pw_gid).gr_name == u
