import hashlib
import subprocess
import threading
import time
from pathlib import Path


def make_dir(tmp_path, n):
    d = tmp_path / "in"
    d.mkdir()
    expect = []
    for i in range(n):
        name = f"f{i:03d}.txt"
        data = "".join(f"line {j} of {i}\n" for j in range(i % 7)) + ("tail" if i % 3 == 0 else "")
        (d / name).write_text(data)
        expect.append(f"{hashlib.sha256(data.encode()).hexdigest()} {data.count(chr(10))} {name}")
    (d / "subdir").mkdir()
    return d, sorted(expect, key=lambda line: line.split()[2])


def test_complete_and_correct(tmp_path):
    d, expect = make_dir(tmp_path, 20)
    for k in range(2):
        out = tmp_path / f"out{k}.txt"
        r = subprocess.run(["bash", "/app/digest_all.sh", str(d), str(out)], capture_output=True, text=True, timeout=150)
        assert r.returncode == 0, r.stderr
        assert r.stdout.strip() == "digested 20 file(s)"
        assert out.read_text().splitlines() == expect


def count_sleepers():
    n = 0
    for p in Path("/proc").iterdir():
        try:
            if p.name.isdigit() and (p / "cmdline").read_bytes().split(b"\0")[:2] == [b"sleep", b"0.05"]:
                n += 1
        except OSError:
            pass
    return n


def test_empty_dir_and_limit(tmp_path):
    e = tmp_path / "empty"
    e.mkdir()
    out = tmp_path / "o.txt"
    r = subprocess.run(["bash", "/app/digest_all.sh", str(e), str(out)], capture_output=True, text=True, timeout=150)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "digested 0 file(s)"
    assert out.read_text() == ""
    d, expect = make_dir(tmp_path, 12)
    peak = [0]
    proc = subprocess.Popen(["bash", "/app/digest_all.sh", str(d), str(out)], stdout=subprocess.PIPE, text=True)
    stop = threading.Event()

    def watch():
        while not stop.is_set():
            peak[0] = max(peak[0], count_sleepers())
            time.sleep(0.005)
    t = threading.Thread(target=watch)
    t.start()
    try:
        proc.wait(timeout=150)
    finally:
        stop.set()
        t.join()
    assert proc.returncode == 0
    assert out.read_text().splitlines() == expect
    assert 2 <= peak[0] <= 4, peak[0]  # still parallel, never more than 4 at once
