import configparser
import hashlib
import json
import subprocess
import time
import urllib.request

SERVER_SHA = "166337e96d8af8ce41385fa5491e06045efee206c43ffcfd8fc1246d55d22594"


def test_service_on_new_port():
    proc = subprocess.Popen(["python3", "/app/svc/server.py"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        body = None
        for _ in range(100):
            try:
                with urllib.request.urlopen("http://127.0.0.1:8181/", timeout=2) as r:
                    body = json.loads(r.read())
                break
            except OSError:
                if proc.poll() is not None:
                    break
                time.sleep(0.1)
        assert body == {"greeting": "Welcome to staging", "environment": "staging"}, body
    finally:
        proc.kill()
        proc.wait()


def test_server_code_unchanged():
    with open("/app/svc/server.py", "rb") as f:
        assert hashlib.sha256(f.read()).hexdigest() == SERVER_SHA
    cfg = configparser.ConfigParser()
    assert cfg.read("/app/svc/app.ini") == ["/app/svc/app.ini"]
    assert cfg["server"].getint("port") == 8181 and cfg["app"]["environment"] == "staging"
