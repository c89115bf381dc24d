import os
import random
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
import mkproc  # noqa: E402  (fixture builder, also used for /app/proc)


def run(root, *extra):
    r = subprocess.run(["python3", "/app/fdreport.py", str(root), *extra], capture_output=True, text=True, timeout=60)
    return r.returncode, [" ".join(l.split()) for l in r.stdout.splitlines() if l.strip()]


def test_example_proc():
    code, lines = run("/app/proc")
    assert lines == ["303 java 1000 4000/4096 97.7%", "101 nginx 33 900/1024 87.9%",
                     "505 redis-server 999 80/100 80.0%", "checked 5 processes, 3 over 80%"]
    assert code == 1


def hidden(root):
    rng = random.Random(21)
    procs, seen = [], set()
    while len(procs) < 40:
        pid = rng.randint(2, 65000)
        if pid in seen:
            continue
        seen.add(pid)
        soft = rng.choice([16, 50, 64, 100, 256, "unlimited"])
        cap = 300 if soft == "unlimited" else soft
        procs.append((pid, rng.choice(["nginx", "php-fpm", "node", "my worker", "java"]), rng.choice([0, 33, 1000]),
                      soft, "unlimited", rng.randint(0, cap)))
    procs.append((7, "tie-a", 0, 100, 100, 90))
    procs.append((3, "tie-b", 0, 200, 200, 180))
    mkproc.make(root, procs)
    os.makedirs(os.path.join(root, "self"))
    Path(root, "uptime").write_text("1.0 1.0\n")
    os.makedirs(os.path.join(root, "9999"))  # incomplete pid dir
    return procs


def expected(procs, thr):
    rows = []
    for pid, name, uid, soft, _, n in procs:
        if soft != "unlimited" and 100.0 * n / soft >= thr:
            rows.append((-100.0 * n / soft, pid, f"{pid} {name} {uid} {n}/{soft} {100.0 * n / soft:.1f}%"))
    return [r[2] for r in sorted(rows)]


def test_hidden_proc_tree():
    with tempfile.TemporaryDirectory() as d:
        procs = hidden(d)
        code, lines = run(d)
    want = expected(procs, 80)
    assert " ".join(lines[-1].split()) == f"checked 42 processes, {len(want)} over 80%"
    assert [" ".join(l.split()) for l in lines[:-1]] == [" ".join(w.split()) for w in want]
    assert code == 1


def test_threshold_option():
    with tempfile.TemporaryDirectory() as d:
        procs = hidden(d)
        code, lines = run(d, "--threshold", "92.5")
        want = expected(procs, 92.5)
        assert [" ".join(l.split()) for l in lines[:-1]] == [" ".join(w.split()) for w in want]
        assert lines[-1] == f"checked 42 processes, {len(want)} over 92.5%"
        code, lines = run(d, "--threshold", "101")
    assert code == 0 and lines == ["checked 42 processes, 0 over 101%"]
