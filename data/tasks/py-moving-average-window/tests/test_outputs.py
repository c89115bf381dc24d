import importlib.util
import subprocess


def load():
    spec = importlib.util.spec_from_file_location("smooth", "/app/smooth.py")
    m = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(m)
    return m


def test_function_windows():
    m = load()
    assert m.moving_average([1, 2, 3, 4, 5], 2) == [1.5, 2.5, 3.5, 4.5]
    assert m.moving_average([4.0, 8.0, 6.0], 3) == [6.0]
    assert m.moving_average([1, 2], 3) == []
    assert m.moving_average([7], 1) == [7.0]


def test_cli_output():
    vals = "10\n20\n30\n40\n50\n60\n"
    r = subprocess.run(["python3", "/app/smooth.py", "3"], input=vals, capture_output=True, text=True, timeout=30)
    assert r.returncode == 0, r.stderr
    assert r.stdout.split() == ["20.0000", "30.0000", "40.0000", "50.0000"]
