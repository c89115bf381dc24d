import os
import subprocess


def make(*args):
    return subprocess.run(["make", "-C", "/app", *args], capture_output=True, text=True, timeout=60)


def test_make_succeeds():
    subprocess.run(["rm", "-rf", "/app/build"])
    out = make()
    assert out.returncode == 0, out.stdout + out.stderr
    assert os.access("/app/build/hello", os.X_OK)


def test_binary_runs():
    subprocess.run(["rm", "-rf", "/app/build"])
    make()
    assert subprocess.run(["/app/build/hello"], capture_output=True, text=True).stdout == "Hello, world!\n"
    assert subprocess.run(["/app/build/hello", "termrl"], capture_output=True, text=True).stdout == "Hello, termrl!\n"


def test_make_clean():
    assert make().returncode == 0
    assert os.path.exists("/app/build/hello")
    out = make("clean")
    assert out.returncode == 0, out.stdout + out.stderr
    assert not os.path.exists("/app/build")
