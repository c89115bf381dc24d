from pathlib import Path

P = Path("/app/restored/project")
FINAL = {"src/main.py": "v2 main\n", "src/helpers.py": "helpers\n", "README.md": "readme v3\n",
         "docs/manual.md": "guide\n", "CHANGELOG": "changelog\n"}


def test_latest_contents():
    for rel, text in FINAL.items():
        assert (P / rel).read_text() == text, rel


def test_deleted_files_absent():
    files = sorted(str(p.relative_to(P)) for p in P.rglob("*") if p.is_file())
    assert files == sorted(FINAL)
    assert not (P / "old").exists()
    assert sorted(p.name for p in Path("/app/backups").iterdir()) == [
        "backup-0-full.tar.gz", "backup-1-incr.tar.gz", "backup-2-incr.tar.gz"]
