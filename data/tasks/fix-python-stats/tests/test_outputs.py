import importlib.util
import subprocess


def load():
    spec = importlib.util.spec_from_file_location("stats", "/app/stats.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_median_odd_and_even():
    s = load()
    assert s.median([3, 1, 2]) == 2
    assert s.median([5, 1, 9, 7, 3]) == 5
    assert s.median([4, 1, 3, 2]) == 2.5
    assert s.median([10, 20]) == 15


def test_sample_variance():
    s = load()
    assert abs(s.variance([2, 4, 4, 4, 5, 5, 7, 9]) - 32 / 7) < 1e-9
    assert abs(s.variance([1, 2, 3]) - 1.0) < 1e-9


def test_cli_output():
    out = subprocess.run(["python3", "/app/stats.py", "/app/values.txt"], capture_output=True, text=True, timeout=30)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "mean=18.000 median=15.500 variance=182.000"
