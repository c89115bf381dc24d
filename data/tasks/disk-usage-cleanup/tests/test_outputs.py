import os
from pathlib import Path

V = Path("/app/var")
KEPT = {"log/nginx/access.log": 734003, "log/nginx/error.log": 120450, "log/syslog": 905211,
        "lib/postgres/base.dat": 2097152, "lib/postgres/wal.dat": 1048576, "cache/apt/pkgcache.bin": 1500000,
        "cache/apt/srcpkgcache.bin": 1499999, "www/uploads/core.png": 640000, "www/uploads/report.pdf": 88000,
        "www/core.dump.txt": 4000}


def test_core_dumps_removed():
    for rel in ("crash/core.4121", "crash/core", "log/core.17"):
        assert not (V / rel).exists(), rel
    missing = sorted(rel for rel, size in KEPT.items() if not (V / rel).is_file() or (V / rel).stat().st_size != size)
    assert missing == [], "files that had to be kept are gone or changed"


def test_other_files_kept():
    assert not (V / "crash/core").exists()
    files = {str(p.relative_to(V)): p.stat().st_size for p in V.rglob("*") if p.is_file()}
    assert files == KEPT


def test_largest_report():
    rows = [l.split() for l in Path("/app/largest.txt").read_text().splitlines() if l.strip()]
    assert rows == [["2097152", "/app/var/lib/postgres/base.dat"], ["1500000", "/app/var/cache/apt/pkgcache.bin"],
                    ["1499999", "/app/var/cache/apt/srcpkgcache.bin"], ["1048576", "/app/var/lib/postgres/wal.dat"],
                    ["905211", "/app/var/log/syslog"]]
