import glob
import os

E = "/app/rootfs/etc/security"


def effective():
    files = [f"{E}/limits.conf"] + sorted(glob.glob(f"{E}/limits.d/*.conf"), key=os.path.basename)
    eff = {}
    for f in files:
        for line in open(f):
            line = line.split("#", 1)[0].split()
            if not line:
                continue
            assert len(line) == 4, (f, line)
            dom, typ, item, val = line
            assert typ in ("soft", "hard", "-"), line
            for t in (["soft", "hard"] if typ == "-" else [typ]):
                eff[(dom, item, t)] = val
    return eff


def test_web_nofile():
    e = effective()
    assert e.get(("@web", "nofile", "soft")) == "8192"
    assert e.get(("@web", "nofile", "hard")) == "65536"


def test_build_nproc():
    e = effective()
    assert e.get(("build", "nproc", "soft")) == "256"
    assert e.get(("build", "nproc", "hard")) == "512"


def test_postgres_memlock():
    e = effective()
    assert e.get(("postgres", "memlock", "soft")) == "unlimited"
    assert e.get(("postgres", "memlock", "hard")) == "unlimited"


def test_nothing_else():
    e = effective()
    assert e == {
        ("*", "core", "hard"): "0",
        ("@web", "nofile", "soft"): "8192", ("@web", "nofile", "hard"): "65536",
        ("build", "nproc", "soft"): "256", ("build", "nproc", "hard"): "512",
        ("postgres", "memlock", "soft"): "unlimited", ("postgres", "memlock", "hard"): "unlimited",
        ("@students", "maxlogins", "soft"): "2", ("@students", "maxlogins", "hard"): "2",
    }
