import json
import subprocess
import sys
import tempfile

sys.path.insert(0, "/tests")
import tardiff_ref  # noqa: E402


def run(a, b):
    r = subprocess.run([sys.executable, "/app/tardiff.py", a, b], capture_output=True, text=True, timeout=30)
    assert r.returncode == 0, r.stderr[-1500:]
    return json.loads(r.stdout)


def cases():
    yield run("/app/old.tar.gz", "/app/new.tar.xz"), tardiff_ref.diff("/app/old.tar.gz", "/app/new.tar.xz")
    for seed in [1, 2, 3, 4]:
        d = tempfile.mkdtemp()
        a, b = tardiff_ref.generate(d, seed)
        yield run(a, b), tardiff_ref.diff(a, b)
        yield run(b, a), tardiff_ref.diff(b, a)


def test_added_removed():
    for got, exp in cases():
        assert (got["added"], got["removed"]) == (exp["added"], exp["removed"])


def test_changed():
    for got, exp in cases():
        assert got["changed"] == exp["changed"]
