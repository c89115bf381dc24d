import subprocess
import sys
import tempfile

sys.path.insert(0, "/tests")
import units_ref  # noqa: E402


def run(d, target):
    return subprocess.run([sys.executable, "/app/unit_order.py", d, target], capture_output=True, text=True, timeout=30)


def test_example_dir():
    r = run("/app/units", "app.target")
    assert r.returncode == 0, r.stderr[-1500:]
    assert r.stdout.split() == units_ref.order("/app/units", "app.target")
    r = run("/app/units", "base.target")
    assert r.stdout.split() == units_ref.order("/app/units", "base.target")


def test_generated_dirs():
    for seed in [1, 17, 29, 31337, 77]:
        d = tempfile.mkdtemp()
        units_ref.generate(d, seed, n=18)
        for target in ["app.target", "extra.target"]:
            r = run(d, target)
            exp = units_ref.order(d, target)
            assert exp is not None
            assert r.returncode == 0, r.stderr[-1500:]
            assert r.stdout.split() == exp, (seed, target)


def test_cycle_detected():
    for seed in [3, 8]:
        d = tempfile.mkdtemp()
        units_ref.generate(d, seed, cycle=True)
        r = run(d, "app.target")
        assert r.returncode == 1 and r.stdout.strip() == ""
    d = tempfile.mkdtemp()
    units_ref.generate(d, 5)
    r = run(d, "app.target")
    assert r.returncode == 0 and r.stdout.split() == units_ref.order(d, "app.target")
