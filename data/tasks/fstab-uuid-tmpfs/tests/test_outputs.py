from pathlib import Path


def entries():
    rows = []
    for line in Path("/app/rootfs/etc/fstab").read_text().splitlines():
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        f = line.split()
        assert len(f) == 6, line
        rows.append(f)
    return rows


EXPECTED = [
    ["UUID=3e6be9de-8139-11d1-9106-a43f08d823a6", "/", "ext4", "errors=remount-ro", "0", "1"],
    ["UUID=b7c4e5f6-0d1e-4a2b-9c8d-7e6f5a4b3c2d", "none", "swap", "sw", "0", "0"],
    ["UUID=91d3c2a0-55e4-4f11-8a7b-2c3d4e5f6a7b", "/srv/data", "xfs", "defaults,noatime", "0", "2"],
    ["UUID=c0ffee00-1234-4abc-8def-0123456789ab", "/var/backups", "ext4", "defaults,nofail", "0", "2"],
    ["/dev/sr0", "/media/cdrom0", "udf,iso9660", "user,noauto", "0", "0"],
    ["proc", "/proc", "proc", "defaults", "0", "0"],
]


def test_uuids():
    rows = [r for r in entries() if r[1] != "/tmp"]
    assert sorted(rows) == sorted(EXPECTED)


def test_tmpfs_entry():
    rows = entries()
    tmp = [r for r in rows if r[1] == "/tmp"]
    assert tmp == [["tmpfs", "/tmp", "tmpfs", "nosuid,nodev,size=512m", "0", "0"]]
    assert len(rows) == 7
