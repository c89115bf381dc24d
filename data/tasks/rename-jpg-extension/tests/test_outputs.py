import hashlib
import os

D = "/app/photos"
RENAMED = {"IMG_0001.JPG": "IMG_0001.jpg", "IMG_0002.jpeg": "IMG_0002.jpg", "IMG_0003.Jpeg": "IMG_0003.jpg",
           "beach day.JPEG": "beach day.jpg", "IMG_0005.jpg": "IMG_0005.jpg", "sunset.JpG": "sunset.jpg"}
OTHERS = ["notes.txt", "IMG_0006.PNG", "clip.MOV", "jpeg_readme.md", "scan.jpeg.bak"]


def content(orig):
    return hashlib.sha256(orig.encode()).digest() * 40


def test_jpegs_renamed():
    names = set(os.listdir(D))
    for orig, new in RENAMED.items():
        assert new in names, new
        with open(os.path.join(D, new), "rb") as f:
            assert f.read() == content(orig), new
    assert names == set(RENAMED.values()) | set(OTHERS)


def test_other_files_untouched():
    names = set(os.listdir(D))
    assert "IMG_0001.JPG" not in names and "sunset.jpg" in names
    for n in OTHERS:
        with open(os.path.join(D, n), "rb") as f:
            assert f.read() == content(n), n
