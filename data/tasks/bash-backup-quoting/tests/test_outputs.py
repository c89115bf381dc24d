import subprocess


def run(*args):
    return subprocess.run(["bash", "/app/backup.sh", *args], capture_output=True, text=True, timeout=30)


def test_awkward_names(tmp_path):
    src = tmp_path / "my docs"
    src.mkdir()
    names = ["plain.txt", "two words.txt", "star*.txt", "[draft].txt", "-dash.txt", "  spaced  .txt"]
    for n in names:
        (src / n).write_text("content of " + n)
    (src / "skip.md").write_text("no")
    (src / "sub.txt").mkdir()
    (src / "sub.txt" / "inner.txt").write_text("no")
    dest = tmp_path / "out dir" / "b"
    r = run(str(src), str(dest))
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "backed up 6 file(s)"
    got = sorted(p.name for p in dest.iterdir())
    assert got == sorted(n + ".bak" for n in names)
    for n in names:
        assert (dest / (n + ".bak")).read_text() == "content of " + n


def test_empty_and_usage(tmp_path):
    src = tmp_path / "empty src"
    src.mkdir()
    (src / "a.log").write_text("x")
    r = run(str(src), str(tmp_path / "d e"))
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "backed up 0 file(s)"
    assert list((tmp_path / "d e").iterdir()) == []
    r = run(str(src))
    assert r.returncode == 2
    assert "usage: backup.sh SRC_DIR DEST_DIR" in r.stderr
    r = run("", str(tmp_path / "z"))
    assert r.returncode == 2
