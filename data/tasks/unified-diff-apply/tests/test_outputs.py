import difflib
import os
import random
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest

# The instruction forbids delegating to `git apply`/`patch` (patch is not installed): make git non-executable
# while the agent's program runs (even root cannot exec a file without any x bit).
GIT_BINARIES = ["/usr/bin/git", "/usr/lib/git-core/git"]


@pytest.fixture(autouse=True)
def no_git():
    modes = {}
    try:
        for p in GIT_BINARIES:
            if os.path.isfile(p):
                modes[p] = os.stat(p).st_mode
                os.chmod(p, 0)
        yield
    finally:
        for p, mode in modes.items():
            os.chmod(p, mode)


def udiff(old, new, name, n=2):
    a = old.splitlines(keepends=True)
    b = new.splitlines(keepends=True)
    return "".join(difflib.unified_diff(a, b, f"a/{name}", f"b/{name}", n=n))


def apply(d, patch):
    Path(d, "p.diff").write_text(patch)
    r = subprocess.run(["/app/apply-patch", "p.diff"], cwd=d, capture_output=True, text=True, timeout=30)
    os.remove(os.path.join(d, "p.diff"))
    return r


def snapshot(d):
    return {str(p.relative_to(d)): p.read_bytes() for p in Path(d).rglob("*") if p.is_file()}


def test_example_patch():
    d = tempfile.mkdtemp()
    shutil.copytree("/app/example", d, dirs_exist_ok=True)
    r = subprocess.run(["/app/apply-patch", "change.patch"], cwd=d, capture_output=True, text=True, timeout=30)
    assert r.returncode == 0, r.stderr
    assert Path(d, "words.txt").read_text() == "alpha\nBETA\ngamma\ndelta\n"
    assert Path(d, "notes/new.txt").read_text() == "brand new\nfile\n"
    # the example patch with other added lines: the result must follow the patch, not a fixed text
    d = tempfile.mkdtemp()
    shutil.copytree("/app/example", d, dirs_exist_ok=True)
    patch = Path(d, "change.patch").read_text().replace("+BETA", "+Beta 2").replace("+brand new", "+fresh")
    r = apply(d, patch)
    assert r.returncode == 0, r.stderr
    assert Path(d, "words.txt").read_text() == "alpha\nBeta 2\ngamma\ndelta\n"
    assert Path(d, "notes/new.txt").read_text() == "fresh\nfile\n"


def test_multi_file_hunks():
    rnd = random.Random(12)
    d = tempfile.mkdtemp()
    os.makedirs(f"{d}/src/lib")
    patch, want = "diff --git a/x b/x\nindex 123..456 100644\n", {}
    for k, name in enumerate(["src/main.c", "src/lib/util.c", "README"]):
        old = [f"line {k}.{i} {'x' * rnd.randint(0, 5)}\n" for i in range(60)]
        new = old[:]
        for _ in range(5):
            j = rnd.randrange(len(new))
            op = rnd.random()
            if op < 0.4:
                new[j] = f"changed {j}\n"
            elif op < 0.7:
                new.insert(j, f"inserted {j}\n")
            else:
                del new[j]
        Path(d, name).write_text("".join(old))
        patch += udiff("".join(old), "".join(new), name).replace(f"--- a/{name}\n", f"--- a/{name}\t2024-01-01 10:00:00\n", 1)
        want[name] = "".join(new).encode()
    Path(d, "gone.txt").write_text("bye\nnow\n")
    patch += "--- a/gone.txt\n+++ /dev/null\n@@ -1,2 +0,0 @@\n-bye\n-now\n"
    patch += "--- /dev/null\n+++ b/deep/er/new.md\n@@ -0,0 +1 @@\n+hello\n"
    want["deep/er/new.md"] = b"hello\n"
    r = apply(d, patch)
    assert r.returncode == 0, r.stderr
    assert snapshot(d) == want


def test_newline_markers():
    d = tempfile.mkdtemp()
    Path(d, "a.txt").write_bytes(b"one\ntwo")
    Path(d, "b.txt").write_bytes(b"x\ny\n")
    patch = ("--- a/a.txt\n+++ b/a.txt\n@@ -1,2 +1,2 @@\n one\n-two\n\\ No newline at end of file\n+two\n"
             "--- a/b.txt\n+++ b/b.txt\n@@ -1,2 +1,3 @@\n x\n y\n+z\n\\ No newline at end of file\n")
    r = apply(d, patch)
    assert r.returncode == 0, r.stderr
    assert Path(d, "a.txt").read_bytes() == b"one\ntwo\n"
    assert Path(d, "b.txt").read_bytes() == b"x\ny\nz"


def test_atomic_failure():
    d = tempfile.mkdtemp()
    Path(d, "ok.txt").write_text("1\n2\n3\n")
    Path(d, "bad.txt").write_text("a\nb\nc\nd\n")
    Path(d, "exists.txt").write_text("here\n")
    before = snapshot(d)
    good = "--- a/ok.txt\n+++ b/ok.txt\n@@ -1,3 +1,3 @@\n 1\n-2\n+two\n 3\n"
    cases = [
        good + "--- a/bad.txt\n+++ b/bad.txt\n@@ -2,2 +2,2 @@\n b\n-X\n+Y\n",
        good + "--- a/bad.txt\n+++ b/bad.txt\n@@ -1,2 +1,2 @@\n b\n-c\n+C\n",
        good + "--- a/missing.txt\n+++ b/missing.txt\n@@ -1 +1 @@\n-a\n+b\n",
        good + "--- /dev/null\n+++ b/exists.txt\n@@ -0,0 +1 @@\n+new\n",
    ]
    for patch in cases:
        r = apply(d, patch)
        assert r.returncode == 1 and r.stderr.startswith("error: "), patch
        assert snapshot(d) == before
    r = apply(d, good + "--- a/bad.txt\n+++ b/bad.txt\n@@ -3,1 +3,2 @@\n-c\n+C\n+C2\n")
    assert r.returncode == 0, r.stderr
    assert Path(d, "ok.txt").read_text() == "1\ntwo\n3\n" and Path(d, "bad.txt").read_text() == "a\nb\nC\nC2\nd\n"
