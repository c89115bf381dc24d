import os
import shutil
import subprocess
import time


def make_project(tmp_path):
    d = tmp_path / "proj"
    shutil.copytree("/app", d)
    shutil.rmtree(d / "build", ignore_errors=True)
    return d


def make(d, *args):
    r = subprocess.run(["make", "-C", str(d), *args], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stdout + r.stderr


def run(d):
    return subprocess.run([str(d / "build" / "greet")], capture_output=True, text=True, timeout=10).stdout


def edit(path, old, new):
    time.sleep(1.1)
    path.write_text(path.read_text().replace(old, new))


def mtimes(d):
    return {p.name: p.stat().st_mtime_ns for p in (d / "build").iterdir() if p.suffix in (".o", "") and p.is_file()}


def test_header_change_rebuilds(tmp_path):
    d = make_project(tmp_path)
    make(d)
    assert run(d) == "hello!\nhello!\n"
    before = mtimes(d)
    time.sleep(1.1)
    make(d)  # nothing changed: nothing may be rebuilt
    assert mtimes(d) == before and "greet" in before and "util.o" in before
    edit(d / "include" / "config.h", '"hello"', '"bonjour"')
    make(d)
    assert run(d) == "bonjour!\nbonjour!\n"
    assert mtimes(d)["util.o"] == before["util.o"]  # util.c does not include config.h
    edit(d / "include" / "config.h", "REPEAT 2", "REPEAT 3")
    make(d)
    assert run(d) == "bonjour!\n" * 3
    edit(d / "include" / "util.h", "#endif", "#undef REPEAT\n#define REPEAT 4\n#endif")
    make(d)
    assert run(d) == "bonjour!\n" * 4


def test_new_source_and_clean(tmp_path):
    d = make_project(tmp_path)
    make(d)
    time.sleep(1.1)
    (d / "include" / "extra.h").write_text("#define EXTRA \"more\"\n")
    (d / "src" / "extra.c").write_text('#include <stdio.h>\n#include "extra.h"\n'
                                       '__attribute__((constructor)) static void hi(void) { printf("%s\\n", EXTRA); }\n')
    make(d)
    assert run(d) == "more\nhello!\nhello!\n"
    edit(d / "include" / "extra.h", '"more"', '"less"')
    make(d)
    assert run(d) == "less\nhello!\nhello!\n"
    make(d, "clean")
    assert not (d / "build").exists()
    assert (d / "src" / "main.c").exists() and (d / "include" / "config.h").exists()
