import os
import stat
from pathlib import Path

ROOT = Path("/app/rootfs")


def entries(name):
    return [l.split(":") for l in (ROOT / "etc" / name).read_text().splitlines() if l.strip()]


def test_passwd_entry():
    rows = entries("passwd")
    deploy = [r for r in rows if r[0] == "deploy"]
    assert deploy == [["deploy", "x", "1500", "1500", "Deploy User", "/home/deploy", "/bin/bash"]]
    assert ["alice", "x", "1000", "1000", "Alice,,,", "/home/alice", "/bin/bash"] in rows
    assert len(rows) == 6


def test_primary_group():
    rows = entries("group")
    assert [r for r in rows if r[0] == "deploy"] == [["deploy", "x", "1500", ""]]
    assert len([r for r in rows if r[2] == "1500"]) == 1


def test_docker_membership():
    docker = [r for r in entries("group") if r[0] == "docker"]
    assert len(docker) == 1 and docker[0][:3] == ["docker", "x", "998"]
    assert sorted(docker[0][3].split(",")) == ["alice", "deploy"]


def test_home_directory():
    st = os.stat(ROOT / "home" / "deploy")
    assert stat.S_ISDIR(st.st_mode)
    assert (st.st_uid, st.st_gid) == (1500, 1500)
    assert stat.S_IMODE(st.st_mode) == 0o750
