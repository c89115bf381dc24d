import os
import stat
from pathlib import Path

S = Path("/app/site")
DIRS = ["", "css", "img", "img/icons", "cgi-bin", "docs", "docs/api"]
FILES = {"index.html": "<html></html>\n", "css/main.css": "body{}\n", "img/logo.png": "png\n",
         "img/icons/home.svg": "svg\n", "docs/api/README.md": "# api\n", "docs/about.html": "about\n"}


def mode(p):
    return stat.S_IMODE(os.lstat(p).st_mode)


def test_directories():
    assert sorted(str(p.relative_to(S)) for p in S.rglob("*") if p.is_dir()) == sorted(DIRS[1:])
    for d in DIRS:
        assert mode(S / d) == 0o755, d


def test_regular_files():
    for f, text in FILES.items():
        assert (S / f).read_text() == text
        assert mode(S / f) == 0o644, f


def test_cgi_programs():
    assert sorted(os.listdir(S / "cgi-bin")) == ["hello.cgi", "status.cgi"]
    for f in ["hello.cgi", "status.cgi"]:
        assert mode(S / "cgi-bin" / f) == 0o755, f
    assert (S / "cgi-bin/hello.cgi").read_text() == '#!/bin/sh\necho hi\n'
