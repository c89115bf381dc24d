#!/bin/bash
set -e
cat > /app/supervise.py <<'PY'
import argparse
import json
import signal
import subprocess
import sys
import threading

ap = argparse.ArgumentParser()
ap.add_argument("--max-restarts", type=int, required=True)
ap.add_argument("--backoff", type=float, required=True)
ap.add_argument("--log", required=True)
ap.add_argument("command", nargs=argparse.REMAINDER)
a = ap.parse_args()
cmd = a.command[1:] if a.command and a.command[0] == "--" else a.command
stop = threading.Event()
state = {"child": None, "sig": None}


def log(**ev):
    with open(a.log, "a") as f:
        f.write(json.dumps(ev) + "\n")


def on_signal(signum, _frame):
    state["sig"] = signum
    stop.set()
    if state["child"] is not None and state["child"].poll() is None:
        state["child"].send_signal(signum)


signal.signal(signal.SIGTERM, on_signal)
signal.signal(signal.SIGINT, on_signal)
attempt = 0
while True:
    attempt += 1
    child = subprocess.Popen(cmd)
    state["child"] = child
    log(event="start", attempt=attempt, pid=child.pid)
    if stop.is_set():
        child.send_signal(state["sig"])
    code = child.wait()
    log(event="exit", attempt=attempt, code=code)
    if stop.is_set():
        log(event="stopped", signal=signal.Signals(state["sig"]).name)
        sys.exit(0)
    if code == 0:
        sys.exit(0)
    if attempt > a.max_restarts:
        log(event="giveup")
        sys.exit(1)
    delay = a.backoff * 2 ** (attempt - 1)
    log(event="restart", attempt=attempt + 1, delay=delay)
    if stop.wait(delay):
        log(event="stopped", signal=signal.Signals(state["sig"]).name)
        sys.exit(0)
PY
