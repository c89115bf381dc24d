from pathlib import Path

EXPECTED = {
    "fs.file-max": "2097152",
    "kernel.panic": "20",
    "kernel.pid_max": "4194304",
    "kernel.sysrq": "176",
    "net.core.somaxconn": "4096",
    "net.ipv4.conf.all.rp_filter": "2",
    "net.ipv4.conf.default.rp_filter": "1",
    "net.ipv4.ip_forward": "0",
    "net.ipv4.ip_local_port_range": "32768 60999",
    "net.ipv4.tcp_syncookies": "1",
    "vm.overcommit_memory": "1",
    "vm.swappiness": "10",
}


def parse():
    lines = [l for l in Path("/app/effective-sysctl.conf").read_text().splitlines() if l.strip()]
    pairs = []
    for l in lines:
        k, v = l.split("=", 1)
        pairs.append((k.strip(), " ".join(v.split())))
    return lines, pairs


def test_keys():
    _, pairs = parse()
    assert sorted(k for k, _ in pairs) == sorted(EXPECTED)


def test_values():
    _, pairs = parse()
    assert dict(pairs) == EXPECTED
    assert len(pairs) == len(EXPECTED)


def test_sorted_format():
    lines, pairs = parse()
    assert [k for k, _ in pairs] == sorted(EXPECTED)
    for l in lines:
        assert l.count(" = ") == 1 and l == l.strip(), l
    assert dict(pairs) == EXPECTED
