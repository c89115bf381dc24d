import os
from pathlib import Path

S = Path("/app/sorted")


def check(rel):
    p = S / rel
    assert p.is_file(), f"missing {p}"
    assert p.read_text() == f"content of {p.name}\n"


def test_images_sorted():
    for rel in ["jpg/holiday.jpg", "jpg/beach.JPG", "png/logo.png", "png/scan.PNG"]:
        check(rel)


def test_other_extensions_sorted():
    for rel in ["pdf/report.pdf", "txt/notes.txt", "txt/todo.txt", "gz/backup.tar.gz", "csv/data.csv",
                "other/Makefile", "other/LICENSE"]:
        check(rel)
    assert sorted(os.listdir(S)) == ["csv", "gz", "jpg", "other", "pdf", "png", "txt"]


def test_inbox_empty():
    assert Path("/app/inbox").is_dir() and os.listdir("/app/inbox") == []
    assert sum(len(files) for _, _, files in os.walk(S)) == 11
