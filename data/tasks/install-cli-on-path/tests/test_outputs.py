import os
import random
import subprocess


def greet(*args):
    return subprocess.run(["greet", *args], cwd="/tmp", capture_output=True, text=True, timeout=30,
                          env={"PATH": "/usr/local/bin:/usr/bin:/bin"})


def test_greet_on_path():
    name = "User%d" % random.Random(3).randint(100, 999)
    r = greet("--name", name)
    assert r.returncode == 0, r.stderr
    assert r.stdout == "Hello, %s!\n" % name
    r = greet("--name", "bo", "--shout")
    assert r.stdout == "HELLO, BO!\n"


def test_is_symlink_to_script():
    assert os.path.islink("/usr/local/bin/greet")
    assert os.path.realpath("/usr/local/bin/greet") == "/app/tools/greet.py"
    assert os.access("/app/tools/greet.py", os.X_OK)
