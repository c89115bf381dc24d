import gzip
import os
from pathlib import Path

L = Path("/app/logs")


def lines(prefix, n):
    return "".join(f"{prefix} line {i}\n" for i in range(1, n + 1))


def test_rotated_compressed():
    for n in ["app", "worker"]:
        for i in (1, 2, 3):
            assert not (L / f"{n}.log.{i}").exists()
            assert gzip.decompress((L / f"{n}.log.{i}.gz").read_bytes()).decode() == lines(f"{n} rotated {i}", i * 40)
    for i in (1, 2):
        assert not (L / f"nginx/access.log.{i}").exists()
        assert gzip.decompress((L / f"nginx/access.log.{i}.gz").read_bytes()).decode() == lines(f"access {i}", 30)


def test_others_untouched():
    assert (L / "app.log").read_text() == "app current\n"
    assert (L / "worker.log").read_text() == "worker current\n"
    assert (L / "nginx/access.log").read_text() == "access current\n"
    assert (L / "README.1st").read_text() == "keep me\n"
    assert gzip.decompress((L / "app.log.4.gz").read_bytes()).decode() == lines("app rotated 4", 10)
    names = sorted(str(p.relative_to(L)) for p in L.rglob("*") if p.is_file())
    assert names == sorted(["README.1st", "app.log", "worker.log", "nginx/access.log", "app.log.4.gz"]
                           + [f"{n}.log.{i}.gz" for n in ["app", "worker"] for i in (1, 2, 3)]
                           + [f"nginx/access.log.{i}.gz" for i in (1, 2)])
