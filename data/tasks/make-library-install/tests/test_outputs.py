import os
import shutil
import stat
import subprocess
import tempfile
import time
from pathlib import Path

APP = Path("/app")
PROG = r"""
#include <stdio.h>
#include <vec.h>
#include <strbuf.h>
int main(void) {
    vec v; vec_init(&v);
    for (long i = 0; i < 10; i++) vec_push(&v, i * i);
    long x = 0;
    int e = vec_get(&v, 99, &x);
    strbuf b; sb_init(&b);
    char *p[] = {"x", "y"};
    sb_join(&b, "+", p, 2);
    printf("%ld %d %s %s %d\n", vec_sum(&v), e, mini_strerror(e), b.s, MINI_EEMPTY);
    return 0;
}
"""


def make(*args, cwd="/app"):
    r = subprocess.run(["make", "-C", cwd, *args], capture_output=True, text=True, timeout=180)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    return r


def copy_project():
    d = tempfile.mkdtemp()
    for name in ("Makefile", "lib", "tools", "gen", "tests"):
        src = APP / name
        if src.is_dir():
            shutil.copytree(src, Path(d, name))
        else:
            shutil.copy(src, Path(d, name))
    return d


def test_build_outputs():
    d = copy_project()
    make(cwd=d)
    b = Path(d, "build")
    assert "#define MINI_ERANGE 2" in (b / "include/errcodes.h").read_text()
    assert os.readlink(b / "libmini.so.1") == "libmini.so.1.2.0"
    assert os.readlink(b / "libmini.so") == "libmini.so.1"
    dyn = subprocess.run(["readelf", "-d", str(b / "libmini.so.1.2.0")], capture_output=True, text=True).stdout
    assert "Library soname: [libmini.so.1]" in dyn
    members = subprocess.run(["ar", "t", str(b / "libmini.a")], capture_output=True, text=True).stdout.split()
    assert sorted(members) == ["strbuf.o", "vec.o"]
    out = subprocess.run([str(b / "bin/sumtool")], input="4 5 6\n", capture_output=True, text=True).stdout
    assert out == "count=3 sum=15 last=6\n"
    out = subprocess.run([str(b / "bin/sumtool")], input="", capture_output=True, text=True).stdout
    assert out == "error: container is empty\n"
    out = subprocess.run([str(b / "bin/joiner"), "-", "a", "b c", "d"], capture_output=True, text=True).stdout
    assert out == "a-b c-d\n"
    ldd = subprocess.run(["ldd", str(b / "bin/joiner")], capture_output=True, text=True).stdout
    assert "libmini" not in ldd
    make("clean", cwd=d)
    assert not b.exists() and Path(d, "lib/vec.c").exists()


def test_parallel_build_and_check():
    d = copy_project()
    make("-j8", cwd=d)
    assert Path(d, "build/bin/joiner").exists() and Path(d, "build/libmini.so.1.2.0").exists()
    r = make("check", cwd=d)
    assert "all tests passed" in r.stdout
    Path(d, "tests/test_lib.c").write_text('int main(void) { return 3; }\n')
    r = subprocess.run(["make", "-C", d, "check"], capture_output=True, text=True, timeout=120)
    assert r.returncode != 0


def test_regenerates_header():
    d = copy_project()
    make(cwd=d)
    time.sleep(0.05)
    with open(Path(d, "gen/errors.tbl"), "a") as f:
        f.write("EBUSY         4     resource busy\n")
    make(cwd=d)
    assert "#define MINI_EBUSY 4" in Path(d, "build/include/errcodes.h").read_text()
    Path(d, "t.c").write_text('#include <stdio.h>\n#include "vec.h"\nint main(void) { puts(mini_strerror(MINI_EBUSY)); return 0; }\n')
    r = subprocess.run(["gcc", "-I", f"{d}/build/include", "-I", f"{d}/lib", "-o", f"{d}/t", f"{d}/t.c", f"{d}/build/libmini.a"],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert subprocess.run([f"{d}/t"], capture_output=True, text=True).stdout == "resource busy\n"
    before = {p: p.stat().st_mtime_ns for p in Path(d, "build").rglob("*") if p.is_file()}
    make(cwd=d)
    after = {p: p.stat().st_mtime_ns for p in Path(d, "build").rglob("*") if p.is_file()}
    assert before == after, "a second make rebuilt something"


def test_install_layout_and_linking():
    d = copy_project()
    make(cwd=d)
    dest = tempfile.mkdtemp()
    make("install", f"DESTDIR={dest}", "PREFIX=/opt/mini", cwd=d)
    root = Path(dest, "opt/mini")
    for tool in ("sumtool", "joiner"):
        assert stat.S_IMODE((root / "bin" / tool).stat().st_mode) == 0o755
    for h in ("vec.h", "strbuf.h", "errcodes.h"):
        assert stat.S_IMODE((root / "include/mini" / h).stat().st_mode) == 0o644
    assert os.readlink(root / "lib/libmini.so.1") == "libmini.so.1.2.0"
    assert os.readlink(root / "lib/libmini.so") == "libmini.so.1"
    assert (root / "lib/libmini.a").is_file() and (root / "lib/libmini.so.1.2.0").is_file()
    shutil.rmtree(Path(d, "build"))
    Path(dest, "p.c").write_text(PROG)
    inc, lib = str(root / "include/mini"), str(root / "lib")
    r = subprocess.run(["gcc", "-I", inc, "-o", f"{dest}/shared", f"{dest}/p.c", "-L", lib, "-lmini"], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    out = subprocess.run([f"{dest}/shared"], capture_output=True, text=True, env={"LD_LIBRARY_PATH": lib}).stdout
    assert out == "285 2 index out of range x+y 3\n"
    needed = subprocess.run(["readelf", "-d", f"{dest}/shared"], capture_output=True, text=True).stdout
    assert "Shared library: [libmini.so.1]" in needed
    r = subprocess.run(["gcc", "-static", "-I", inc, "-o", f"{dest}/static", f"{dest}/p.c", f"{lib}/libmini.a"], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert subprocess.run([f"{dest}/static"], capture_output=True, text=True).stdout == "285 2 index out of range x+y 3\n"
    out = subprocess.run([str(root / "bin/joiner"), ":", "p", "q"], capture_output=True, text=True).stdout
    assert out == "p:q\n"
