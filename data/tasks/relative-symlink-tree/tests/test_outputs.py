import os
import shutil
import tempfile
from pathlib import Path

W = "/app/www"
CHANGED = {
    "current": "releases/2.2",
    "releases/2.2/uploads": "shared/uploads",
    "releases/2.2/.env": "shared/.env",
    "sites/blog/index.php": "current/index.php",
    "sites/shop/static/style.css": "releases/2.2/assets/site.css",
    "broken-next": "releases/9.9",
}


def norm_target(link):
    t = os.readlink(link)
    assert not t.startswith("/"), (link, t)
    return os.path.normpath(os.path.join(os.path.dirname(link), t))


def test_links_relative_and_equivalent():
    for rel, target in CHANGED.items():
        p = f"{W}/{rel}"
        assert os.path.islink(p), p
        assert norm_target(p) == f"{W}/{target}", rel
    assert open(f"{W}/sites/blog/index.php").read() == "app 2.2\n"


def test_tree_relocatable():
    assert all(os.path.islink(f"{W}/{r}") for r in CHANGED)
    d = tempfile.mkdtemp()
    try:
        dst = shutil.copytree(W, f"{d}/moved", symlinks=True)
        assert open(f"{dst}/sites/blog/index.php").read() == "app 2.2\n"
        assert open(f"{dst}/sites/shop/static/style.css").read() == "css\n"
        assert open(f"{dst}/releases/2.2/.env").read() == "env\n"
        assert os.path.realpath(f"{dst}/current").startswith(dst)
        assert os.listdir(f"{dst}/releases/2.2/uploads") == ["logo.png"]
    finally:
        shutil.rmtree(d)


def test_other_links_untouched():
    assert os.readlink(f"{W}/sites/shop/uploads") == "../../shared/uploads"
    assert os.readlink(f"{W}/shared/hostname") == "/etc/hostname"
    links = sorted(str(p.relative_to(W)) for p in Path(W).rglob("*") if p.is_symlink())
    assert links == sorted(list(CHANGED) + ["sites/shop/uploads", "shared/hostname"])
    assert all(not os.readlink(f"{W}/{r}").startswith("/") for r in CHANGED)
    assert not os.path.islink(f"{W}/releases/2.2") and open(f"{W}/releases/2.1/index.php").read() == "app 2.1\n"
