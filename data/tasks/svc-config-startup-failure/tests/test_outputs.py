import json
import os
import signal
import socket
import subprocess
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest

LOG = Path("/var/log/inventory/access.log")
DATA = Path("/app/svc/data")
EXTRA = DATA / "zz-hidden-extra.json"  # a data file the agent has not seen: items must come from the files


@pytest.fixture
def service():
    if LOG.exists():
        LOG.unlink()
    if DATA.is_dir():
        EXTRA.write_text(json.dumps([{"id": "EXTRA-77", "name": "Hidden widget", "qty": 12}]), encoding="utf-8")
    proc = subprocess.Popen(["bash", "/app/svc/start.sh"], cwd="/", start_new_session=True,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        deadline = time.time() + 30
        while True:
            try:
                socket.create_connection(("127.0.0.1", 8080), timeout=1).close()
                break
            except OSError:
                if proc.poll() is not None:
                    pytest.fail("service exited: " + proc.stderr.read().decode()[-1500:])
                assert time.time() < deadline, "service did not listen on 127.0.0.1:8080"
                time.sleep(0.2)
        yield
    finally:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
        EXTRA.unlink(missing_ok=True)


def get(path):
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:8080{path}", timeout=10) as r:
            return r.status, json.loads(r.read().decode("utf-8"))
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read().decode("utf-8"))


def test_health(service):
    assert get("/health") == (200, {"status": "ok", "items": 6})


def test_item_lookup(service):
    assert get("/items/SKU-0042") == (200, {"id": "SKU-0042", "name": "Washer", "qty": 55})
    assert get("/items/TOOL-9") == (200, {"id": "TOOL-9", "name": "Drehmomentschlüssel", "qty": 3})
    assert get("/items/7") == (200, {"id": "7", "name": "Legacy part", "qty": 1})
    assert get("/items/EXTRA-77") == (200, {"id": "EXTRA-77", "name": "Hidden widget", "qty": 12})
    assert get("/items/SKU-9999") == (404, {"error": "not found"})
    assert get("/nothing") == (404, {"error": "not found"})


def test_access_log(service):
    get("/health")
    get("/items/SKU-0100")
    get("/items/missing-1")
    want = ["GET /health 200", "GET /items/SKU-0100 200", "GET /items/missing-1 404"]
    deadline = time.time() + 5  # the server may append the line just after sending the reply
    while time.time() < deadline and not (LOG.exists() and len(LOG.read_text().splitlines()) >= len(want)):
        time.sleep(0.1)
    assert LOG.read_text().splitlines() == want
