import json
import resource
import subprocess


def limit():
    resource.setrlimit(resource.RLIMIT_AS, (1 << 30, 1 << 30))

CASES = [(0.0, 1.0, 0.1), (1.5, 2.4, 0.3), (-1.0, 1.0, 0.2), (0.0, 3.0, 0.01), (2.0, 2.0, 0.5), (0.7, 1.0, 0.1)]


def test_schedule_values():
    code = ("import importlib.util, json\n"
            "spec = importlib.util.spec_from_file_location('ticks', '/app/ticks.py')\n"
            "m = importlib.util.module_from_spec(spec); spec.loader.exec_module(m)\n"
            f"print(json.dumps([m.schedule(*c) for c in {CASES!r}]))\n")
    r = subprocess.run(["python3", "-c", code], capture_output=True, text=True, timeout=10, preexec_fn=limit)
    assert r.returncode == 0, r.stderr
    got = json.loads(r.stdout)
    for (a, b, s), ticks in zip(CASES, got):
        n = round((b - a) / s)
        assert len(ticks) == n, (a, b, s, len(ticks))
        for i, t in enumerate(ticks):
            assert abs(t - (a + i * s)) < 1e-9


def test_cli():
    r = subprocess.run(["python3", "/app/ticks.py", "0", "1", "0.1"], capture_output=True, text=True, timeout=10, preexec_fn=limit)
    assert r.returncode == 0
    assert r.stdout.split() == [f"{i / 10:.6f}" for i in range(10)]
