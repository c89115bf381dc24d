import os
import random
import subprocess
import tempfile
from collections import defaultdict
from datetime import datetime, timedelta
from pathlib import Path


def reference(names, d, w, m):
    groups = defaultdict(list)
    for f in names:
        name, rest = f.split("_", 1)
        groups[name].append((datetime.strptime(rest[:17], "%Y-%m-%d_%H%M%S"), f))
    keep = set()
    for items in groups.values():
        items.sort(reverse=True)
        for n, key in ((d, lambda t: t.date()), (w, lambda t: tuple(t.isocalendar())[:2]), (m, lambda t: (t.year, t.month))):
            seen = []
            for ts, f in items:
                if key(ts) in seen:
                    continue
                if len(seen) >= n:
                    break
                seen.append(key(ts))
                keep.add(f)
    return keep


def run(d, *args):
    r = subprocess.run(["python3", "/app/prune.py", str(d), *args], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    return [l.strip() for l in r.stdout.splitlines() if l.strip()]


def make_set(d, seed):
    rng = random.Random(seed)
    names = []
    for prefix in ("db-main", "www", "mail2"):
        t = datetime(2023, 1, 1, 3, 0, 0)
        while t < datetime(2024, 3, 1):
            t += timedelta(hours=rng.choice([6, 11, 24, 24, 24, 30, 72]), minutes=rng.randint(0, 59))
            f = f"{prefix}_{t:%Y-%m-%d_%H%M%S}.tar.gz"
            Path(d, f).write_text(f)
            names.append(f)
    for extra in ("README", "www_latest.tar.gz", "db-main_2024-02-30_000000.tar.gz.part", "notes_2024-01-01.txt"):
        Path(d, extra).write_text("x")
    return names


def test_example_directory():
    lines = run("/app/backups", "--daily", "3", "--weekly", "2", "--monthly", "2")
    assert lines == ["delete www_2024-01-05_230000.tar.gz", "delete www_2024-02-11_020000.tar.gz", "kept 5, deleted 2"]
    assert sorted(os.listdir("/app/backups")) == sorted(
        ["RESTORE.md", "www_2024-01-20_230000.tar.gz", "www_2024-02-11_230000.tar.gz", "www_2024-02-12_230000.tar.gz",
         "www_2024-02-13_230000.tar.gz", "www_2024-02-14_120000.tar.gz"])


def test_hidden_backup_sets():
    for seed, args in ((1, (7, 4, 6)), (2, (3, 10, 24)), (3, (14, 0, 3))):
        with tempfile.TemporaryDirectory() as d:
            names = make_set(d, seed)
            keep = reference(names, *args)
            lines = run(d, "--daily", str(args[0]), "--weekly", str(args[1]), "--monthly", str(args[2]))
            deleted = sorted(set(names) - keep)
            assert lines == [f"delete {f}" for f in deleted] + [f"kept {len(keep)}, deleted {len(deleted)}"]
            extras = {"README", "www_latest.tar.gz", "db-main_2024-02-30_000000.tar.gz.part", "notes_2024-01-01.txt"}
            assert set(os.listdir(d)) == keep | extras


def test_dry_run_and_zero_rules():
    with tempfile.TemporaryDirectory() as d:
        names = make_set(d, 4)
        before = sorted(os.listdir(d))
        keep = reference(names, 5, 3, 2)
        lines = run(d, "--daily", "5", "--weekly", "3", "--monthly", "2", "--dry-run")
        deleted = sorted(set(names) - keep)
        assert lines == [f"would delete {f}" for f in deleted] + [f"kept {len(keep)}, deleted {len(deleted)}"]
        assert sorted(os.listdir(d)) == before
        lines = run(d, "--daily", "0", "--weekly", "0", "--monthly", "1")
        assert lines[-1] == "kept 3, deleted %d" % (len(names) - 3)
        assert len(os.listdir(d)) == 3 + 4
