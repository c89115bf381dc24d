import os
import stat

S, M = "/app/source", "/app/mirror"
EXPECTED = {"bin", "bin/deploy.sh", "conf", "conf/app.ini", "conf/sites", "conf/sites/default.conf",
            "conf/sites/admin.conf", "docs", "docs/user guide", "docs/user guide/intro.md", "docs/blob.bin",
            "empty-dir", "current.ini", "guide"}


def walk(root, skip_local=False):
    out = set()
    for dp, dns, fns in os.walk(root):
        for n in dns + fns:
            rel = os.path.relpath(os.path.join(dp, n), root)
            if skip_local and (rel == ".local-state" or rel.startswith(".local-state/")):
                continue
            out.add(rel)
    return out


def test_contents_mirrored():
    assert walk(S) == EXPECTED  # source untouched
    assert walk(M, skip_local=True) == EXPECTED
    for rel in EXPECTED:
        s, m = os.path.join(S, rel), os.path.join(M, rel)
        if os.path.islink(s):
            assert os.path.islink(m) and os.readlink(m) == os.readlink(s), rel
        elif os.path.isdir(s):
            assert os.path.isdir(m) and not os.path.islink(m), rel
        else:
            assert not os.path.islink(m) and open(m, "rb").read() == open(s, "rb").read(), rel


def test_metadata_mirrored():
    files = [r for r in EXPECTED if os.path.isfile(os.path.join(S, r)) and not os.path.islink(os.path.join(S, r))]
    assert len(files) == 6
    for rel in files:
        s, m = os.lstat(os.path.join(S, rel)), os.lstat(os.path.join(M, rel))
        assert stat.S_IMODE(s.st_mode) == stat.S_IMODE(m.st_mode), rel
        assert int(s.st_mtime) == int(m.st_mtime), rel


def test_extras_removed_local_state_kept():
    for gone in ["old-release", "conf/sites/legacy.conf", "old-release/VERSION"]:
        assert not os.path.lexists(os.path.join(M, gone)), gone
    assert open(M + "/.local-state/host.conf").read() == "host-id=mirror-7\n"
    assert open(M + "/.local-state/cache/index.db").read() == "cached\n"
    assert stat.S_IMODE(os.stat(M + "/.local-state/host.conf").st_mode) == 0o600
    assert os.readlink(M + "/current.ini") == "conf/app.ini"
    assert open(M + "/bin/deploy.sh").read() == "#!/bin/sh\necho deploy\n"
