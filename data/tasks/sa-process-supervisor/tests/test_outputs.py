import json
import os
import signal
import subprocess
import tempfile
import time
from pathlib import Path


def events(path):
    return [json.loads(l) for l in Path(path).read_text().splitlines() if l.strip()]


def sup(d, n, backoff, cmd, **kw):
    return subprocess.Popen(["python3", "/app/supervise.py", "--max-restarts", str(n), "--backoff", str(backoff),
                             "--log", f"{d}/events.jsonl", "--", *cmd], **kw)


def test_restart_until_success():
    with tempfile.TemporaryDirectory() as d:
        script = Path(d, "job.sh")
        script.write_text(f'#!/bin/bash\nn=$(cat {d}/count 2>/dev/null || echo 0)\necho $((n+1)) > {d}/count\n'
                          f'[ "$n" -ge 3 ] && exit 0\nexit $((n + 4))\n')
        script.chmod(0o755)
        p = sup(d, 5, 0.05, [str(script)])
        assert p.wait(timeout=60) == 0
        ev = events(f"{d}/events.jsonl")
        assert Path(d, "count").read_text().strip() == "4"
    pids = [e.pop("pid") for e in ev if e["event"] == "start"]
    assert len(set(pids)) == 4 and all(isinstance(x, int) and x > 0 for x in pids)
    assert ev == [
        {"event": "start", "attempt": 1}, {"event": "exit", "attempt": 1, "code": 4},
        {"event": "restart", "attempt": 2, "delay": 0.05},
        {"event": "start", "attempt": 2}, {"event": "exit", "attempt": 2, "code": 5},
        {"event": "restart", "attempt": 3, "delay": 0.1},
        {"event": "start", "attempt": 3}, {"event": "exit", "attempt": 3, "code": 6},
        {"event": "restart", "attempt": 4, "delay": 0.2},
        {"event": "start", "attempt": 4}, {"event": "exit", "attempt": 4, "code": 0}]


def test_giveup_and_signal_codes():
    with tempfile.TemporaryDirectory() as d:
        p = sup(d, 2, 0.01, ["sh", "-c", "kill -9 $$"])
        assert p.wait(timeout=60) == 1
        ev = events(f"{d}/events.jsonl")
    assert [e["event"] for e in ev] == ["start", "exit", "restart", "start", "exit", "restart", "start", "exit",
                                        "giveup"]
    assert [e["code"] for e in ev if e["event"] == "exit"] == [-9, -9, -9]
    assert [e["delay"] for e in ev if e["event"] == "restart"] == [0.01, 0.02]
    with tempfile.TemporaryDirectory() as d:
        p = sup(d, 0, 0.01, ["sh", "-c", "exit 7"])
        assert p.wait(timeout=60) == 1
        assert events(f"{d}/events.jsonl")[1:] == [{"event": "exit", "attempt": 1, "code": 7}, {"event": "giveup"}]


def test_sigterm_forwarded():
    with tempfile.TemporaryDirectory() as d:
        child = (f"trap 'echo got-term > {d}/marker; exit 143' TERM; echo $$ > {d}/child.pid; "
                 f"while true; do sleep 0.1; done")
        p = sup(d, 3, 0.01, ["bash", "-c", child])
        try:
            for _ in range(300):
                if Path(d, "child.pid").exists() and Path(d, "child.pid").read_text().strip():
                    break
                time.sleep(0.05)
            time.sleep(0.3)
            p.send_signal(signal.SIGTERM)
            assert p.wait(timeout=30) == 0
        finally:
            if p.poll() is None:
                p.kill()
        assert Path(d, "marker").read_text().strip() == "got-term"
        ev = events(f"{d}/events.jsonl")
        child_pid = int(Path(d, "child.pid").read_text())
    assert [e["event"] for e in ev] == ["start", "exit", "stopped"]
    assert ev[0]["pid"] == child_pid and ev[1]["code"] == 143
    assert ev[2] == {"event": "stopped", "signal": "SIGTERM"}
    try:
        os.kill(child_pid, 0)
        alive = True
    except ProcessLookupError:
        alive = False
    assert not alive
