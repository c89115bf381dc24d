from pathlib import Path

EXPECTED = [
    "2023/beach.jpg 2024/trip/IMG_0001.jpg backup/beach_copy.jpg",
    "2023/dog.jpg backup/dog.jpg",
    "2024/notes.txt backup/notes.txt",
]


def lines():
    return [" ".join(l.split()) for l in Path("/app/duplicates.txt").read_text().splitlines() if l.strip()]


def test_groups_found():
    got = lines()
    for group in EXPECTED:
        assert group in got, group


def test_no_false_positives():
    assert lines() == EXPECTED


def test_files_untouched():
    assert lines()
    files = sorted(str(p.relative_to("/app/photos")) for p in Path("/app/photos").rglob("*") if p.is_file())
    assert len(files) == 12
    assert Path("/app/photos/2024/trip/IMG_0003.jpg").read_text() == "IMG-D bytez\n"
