import os
import subprocess


def test_is_executable():
    assert os.stat("/app/run.sh").st_mode & 0o100, "owner execute bit is not set on /app/run.sh"


def test_runs_directly():
    out = subprocess.run(["/app/run.sh"], capture_output=True, text=True, timeout=10)
    assert out.returncode == 0
    assert out.stdout.strip() == "deploy ok"
