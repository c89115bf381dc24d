from pathlib import Path

HOSTS = Path("/app/rootfs/etc/hosts")


def resolve():
    names = {}
    for line in HOSTS.read_text().splitlines():
        line = line.split("#", 1)[0].split()
        if len(line) < 2:
            continue
        for name in line[1:]:
            names.setdefault(name, []).append(line[0])
    return names


def check_others(names):
    assert names["web01.internal"] == ["10.20.0.4"] and names["web01"] == ["10.20.0.4"]
    assert names["queue.internal"] == ["10.20.0.12"] and names["queue"] == ["10.20.0.12"]
    assert sorted(names["localhost"]) == ["127.0.0.1", "::1"]
    assert names["ip6-loopback"] == ["::1"]


def test_db_entry():
    names = resolve()
    assert names.get("db.internal") == ["10.20.0.15"]
    assert names.get("db") == ["10.20.0.15"]
    check_others(names)


def test_cache_moved():
    names = resolve()
    assert names.get("cache.internal") == ["10.20.0.19"]
    assert names.get("cache") == ["10.20.0.19"]
    assert "10.20.0.9" not in HOSTS.read_text().split()
    check_others(names)
