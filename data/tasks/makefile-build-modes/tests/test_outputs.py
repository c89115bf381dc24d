import subprocess
import time
from pathlib import Path

APP = Path("/app")


def make(*args, ok=True):
    r = subprocess.run(["make", "-C", "/app", *args], capture_output=True, text=True, timeout=120)
    if ok:
        assert r.returncode == 0, r.stdout + r.stderr
    return r


def snap(mode):
    return {str(p): p.stat().st_mtime_ns for p in (APP / "build" / mode).rglob("*") if p.is_file()}


def run(mode, *args):
    return subprocess.run([str(APP / "build" / mode / "app"), *args], capture_output=True, text=True, timeout=10)


def has_debug_info(path):
    out = subprocess.run(["readelf", "-S", str(path)], capture_output=True, text=True).stdout
    return ".debug_info" in out


def test_release_and_debug_builds():
    subprocess.run(["rm", "-rf", "/app/build"])
    make()
    make("MODE=debug")
    r = run("release", "9", "3")
    assert r.stdout == "mode: release\n3\n"
    assert run("release", "5", "0").returncode == 0
    r = run("debug", "9", "3")
    assert r.stdout == "mode: debug\n3\n"
    assert run("debug", "5", "0").returncode != 0
    assert sorted(p.name for p in (APP / "build/release/obj").glob("*.o")) == ["calc.o", "main.o"]
    assert sorted(p.name for p in (APP / "build/debug/obj").glob("*.o")) == ["calc.o", "main.o"]
    assert has_debug_info(APP / "build/debug/obj/calc.o") and not has_debug_info(APP / "build/release/obj/calc.o")


def test_modes_are_independent():
    subprocess.run(["rm", "-rf", "/app/build"])
    make("MODE=release")
    rel = snap("release")
    time.sleep(0.05)
    make("MODE=debug")
    assert snap("release") == rel
    dbg = snap("debug")
    make("MODE=debug")
    assert snap("debug") == dbg
    (APP / "src/extra.c").write_text("int extra_unused(void) { return 7; }\n")
    try:
        time.sleep(0.05)
        make("MODE=debug")
        assert (APP / "build/debug/obj/extra.o").exists()
        assert not (APP / "build/release/obj/extra.o").exists() and snap("release") == rel
    finally:
        (APP / "src/extra.c").unlink()


def test_invalid_mode_and_clean():
    subprocess.run(["rm", "-rf", "/app/build"])
    r = make("MODE=profile", ok=False)
    assert r.returncode != 0 and "invalid MODE" in r.stdout + r.stderr
    assert not (APP / "build").exists() or not list((APP / "build").rglob("*.o"))
    make()
    make("MODE=debug")
    make("clean", "MODE=debug")
    assert not (APP / "build/debug").exists() and (APP / "build/release/app").exists()
    make("clean")
    assert not (APP / "build").exists()
    assert (APP / "src/main.c").exists()
