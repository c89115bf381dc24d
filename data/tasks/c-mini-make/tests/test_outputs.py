import os
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

import pytest

# The program must be C (no wrapper around a script): it is tested where `python3` and `perl` are not available.
HIDDEN_INTERPRETERS = ["/usr/bin/python3", "/usr/bin/perl", "/usr/bin/perl5.36.0"]


@pytest.fixture(scope="module", autouse=True)
def no_interpreters():
    moved = []
    try:
        for p in HIDDEN_INTERPRETERS:
            if os.path.lexists(p):
                os.rename(p, p + ".hidden-by-tests")
                moved.append(p)
        yield
    finally:
        for p in moved:
            os.rename(p + ".hidden-by-tests", p)


_built = []


def mk(cwd, *args):
    if not _built:
        r = subprocess.run(["make", "-C", "/app/mk"], capture_output=True, text=True, timeout=180)
        assert r.returncode == 0, r.stdout + r.stderr
        with open("/app/mk/mk", "rb") as f:
            assert f.read(4) == b"\x7fELF"
        _built.append(1)
    return subprocess.run(["/app/mk/mk", *args], cwd=cwd, capture_output=True, text=True, timeout=60)


def project(mkfile, files=()):
    d = tempfile.mkdtemp()
    Path(d, "Mkfile").write_text(mkfile)
    for name in files:
        Path(d, name).write_text(name + "\n")
    return d


def touch_later(path):
    time.sleep(0.02)
    os.utime(path)


def test_example_project():
    d = tempfile.mkdtemp()
    shutil.copytree("/app/example", d, dirs_exist_ok=True)
    for f in ("prog", "main.o", "util.o"):
        Path(d, f).unlink(missing_ok=True)
    r = mk(d)
    assert r.returncode == 0, r.stderr
    assert r.stdout == ("gcc -O2 -Wall -c main.c\ngcc -O2 -Wall -c util.c\ngcc -o prog main.o util.o\n")
    assert subprocess.run([f"{d}/prog"]).returncode == 0
    r = mk(d)
    assert (r.returncode, r.stdout) == (0, "mk: 'prog' is up to date.\n")
    touch_later(Path(d, "util.c"))
    assert mk(d).stdout == "gcc -O2 -Wall -c util.c\ngcc -o prog main.o util.o\n"
    r = mk(d, "clean")
    assert (r.returncode, r.stdout) == (0, "cleaned\n")
    assert not Path(d, "prog").exists() and not Path(d, "main.o").exists()


def test_variables_and_automatic_vars():
    mkfile = """
OUT = $(NAME).txt   # comment after value
all: $(OUT) extra
$(OUT): a.in b.in a.in
\techo "$@ from $< and $^" > $@
\t@echo 'cost: $$5 $(UNDEFINED)end'
extra second: b.in
\techo making $@
NAME = result
NAME2 = $(NAME)-x
show:
\techo $(NAME2) $$HOME_NOT_EXPANDED
"""
    d = project(mkfile, ["a.in", "b.in"])
    r = mk(d)
    assert r.returncode == 0, r.stderr
    assert r.stdout == ('echo "result.txt from a.in and a.in b.in" > result.txt\ncost: $5 end\n'
                        "echo making extra\nmaking extra\n")
    assert Path(d, "result.txt").read_text() == "result.txt from a.in and a.in b.in\n"
    r = mk(d, "second", "show")
    assert r.stdout == "echo making second\nmaking second\necho result-x $HOME_NOT_EXPANDED\nresult-x\n"
    r = mk(d, "-n", "second")
    assert (r.returncode, r.stdout) == (0, "echo making second\n")
    r = mk(d, "-f", "Mkfile", "result.txt")
    assert r.stdout == "mk: 'result.txt' is up to date.\n"


def test_timestamps_and_phony():
    mkfile = """
app: lib.o main.o
\tcat lib.o main.o > app
lib.o: lib.c common.h
\tcp lib.c lib.o
main.o: main.c
main.o: common.h
\tcp main.c main.o
test: app
\t@echo testing
.PHONY: test
"""
    d = project(mkfile, ["lib.c", "main.c", "common.h"])
    assert mk(d).stdout == "cp lib.c lib.o\ncp main.c main.o\ncat lib.o main.o > app\n"
    assert mk(d).stdout == "mk: 'app' is up to date.\n"
    touch_later(Path(d, "common.h"))
    assert mk(d).stdout == "cp lib.c lib.o\ncp main.c main.o\ncat lib.o main.o > app\n"
    touch_later(Path(d, "main.c"))
    assert mk(d).stdout == "cp main.c main.o\ncat lib.o main.o > app\n"
    assert mk(d, "test").stdout == "testing\n"
    assert mk(d, "test").stdout == "testing\n"
    Path(d, "app").unlink()
    assert mk(d, "-n").stdout == "cat lib.o main.o > app\n"
    assert not Path(d, "app").exists()
    r = mk(d, "main.o", "app")
    assert r.stdout == "mk: 'main.o' is up to date.\ncat lib.o main.o > app\n"


def test_errors():
    d = project("all: missing.c\n\techo never\n")
    r = mk(d)
    assert r.returncode == 2 and "no rule to make target 'missing.c'" in r.stderr and "never" not in r.stdout
    d = project("a: b\n\ttrue\nb: c\n\ttrue\nc: a\n\ttrue\n")
    r = mk(d)
    assert r.returncode == 2 and r.stderr.startswith("mk: ") and "circular" in r.stderr
    d = project("all: one two\none:\n\techo first\n\texit 3\n\techo not reached\ntwo:\n\techo two\n")
    r = mk(d)
    assert r.returncode == 2
    assert r.stdout == "echo first\nfirst\nexit 3\n"
    assert r.stderr.strip() == "mk: *** [one] Error 3"
    d = project("\techo orphan\nall:\n")
    r = mk(d)
    assert r.returncode == 2 and r.stderr.startswith("mk: ")
    d = project("all:\n\techo ok\n")
    r = mk(d, "nosuchtarget")
    assert r.returncode == 2 and "no rule to make target 'nosuchtarget'" in r.stderr
    assert mk(d, "-f", "Nope").returncode == 2
    assert mk(d).stdout == "echo ok\nok\n"
