import os
import subprocess
import tempfile
from pathlib import Path


class Env:
    def __init__(self, d):
        self.d = Path(d)
        self.src, self.dest, self.state = self.d / "app.log", self.d / "out" / "shipped.log", self.d / "ship.state"
        self.dest.parent.mkdir()

    def write(self, text, path=None):
        with open(path or self.src, "a") as f:
            f.write(text)

    def ship(self):
        r = subprocess.run(["python3", "/app/ship.py", str(self.src), str(self.dest), str(self.state)],
                           capture_output=True, text=True, timeout=30)
        assert r.returncode == 0, r.stderr
        return self.dest.read_text() if self.dest.exists() else ""


def lines(a, b, tag="l"):
    return "".join(f"{tag} {i} " + "x" * (i % 7) + "\n" for i in range(a, b))


def test_incremental_and_partial_lines():
    with tempfile.TemporaryDirectory() as d:
        e = Env(d)
        e.write(lines(0, 5))
        assert e.ship() == lines(0, 5)
        assert e.ship() == lines(0, 5)
        e.write(lines(5, 9) + "partial li")
        assert e.ship() == lines(0, 9)
        e.write("ne done\n" + lines(9, 12) + "üñí ✓\n")
        assert e.ship() == lines(0, 9) + "partial line done\n" + lines(9, 12) + "üñí ✓\n"


def test_rotation_by_rename():
    with tempfile.TemporaryDirectory() as d:
        e = Env(d)
        e.write(lines(0, 4))
        e.ship()
        e.write(lines(4, 7))                      # written after the last run, before rotation
        os.rename(e.src, str(e.src) + ".1")
        e.write(lines(0, 3, "new"))
        assert e.ship() == lines(0, 7) + lines(0, 3, "new")
        e.write(lines(3, 5, "new"))
        assert e.ship() == lines(0, 7) + lines(0, 5, "new")
        # second rotation: the old .1 is replaced
        os.rename(e.src, str(e.src) + ".1")
        e.write(lines(0, 2, "third"))
        assert e.ship() == lines(0, 7) + lines(0, 5, "new") + lines(0, 2, "third")
        assert e.ship() == lines(0, 7) + lines(0, 5, "new") + lines(0, 2, "third")


def test_truncation_and_missing():
    with tempfile.TemporaryDirectory() as d:
        e = Env(d)
        e.write(lines(0, 6))
        e.ship()
        with open(e.src, "r+") as f:
            f.truncate(0)
        e.write(lines(0, 2, "after"))
        assert e.ship() == lines(0, 6) + lines(0, 2, "after")
        os.remove(e.src)
        assert e.ship() == lines(0, 6) + lines(0, 2, "after")
        e.write("b\n")  # recreated (shorter than the old position, in case the inode number is reused)
        assert e.ship() == lines(0, 6) + lines(0, 2, "after") + "b\n"
    with tempfile.TemporaryDirectory() as d:
        e = Env(d)
        assert e.ship() == ""
        e.write(lines(0, 2))
        assert e.ship() == lines(0, 2)
