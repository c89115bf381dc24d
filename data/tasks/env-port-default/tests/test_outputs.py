import os
import random
import subprocess
import sys


def port(env_value):
    env = {k: v for k, v in os.environ.items() if k != "APP_PORT"}
    if env_value is not None:
        env["APP_PORT"] = env_value
    r = subprocess.run([sys.executable, "-c", "import app_config; print(repr(app_config.get_port()))"],
                       cwd="/app", env=env, capture_output=True, text=True, timeout=30)
    assert r.returncode == 0, r.stderr
    return r.stdout.strip()


def test_default_and_explicit():
    assert port(None) == "8080"
    assert port("") == "8080"
    p = random.Random(5).randint(1025, 65000)
    assert port(str(p)) == str(p)
    assert port("9000") == "9000"
