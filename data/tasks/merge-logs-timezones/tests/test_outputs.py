import subprocess
import sys
import tempfile

sys.path.insert(0, "/tests")
import tz_ref  # noqa: E402


def run(d):
    r = subprocess.run([sys.executable, "/app/tzmerge.py", d], capture_output=True, text=True, timeout=30)
    assert r.returncode == 0, r.stderr[-1500:]
    return r.stdout


def test_example():
    d = tempfile.mkdtemp()
    exp = tz_ref.generate(d, 31)
    assert open("/app/example/logs/web-1.log").read() == open(f"{d}/logs/web-1.log").read()
    assert run("/app/example") == exp


def test_generated_dst_windows():
    for seed in [1, 2, 3, 4, 5, 6, 7, 8]:
        d = tempfile.mkdtemp()
        exp = tz_ref.generate(d, seed)
        assert run(d) == exp, seed
