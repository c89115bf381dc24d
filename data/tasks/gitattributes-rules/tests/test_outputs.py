import subprocess

REPO = "/app/repo"


def attrs(path):
    r = subprocess.run(["git", "-C", REPO, "check-attr", "text", "diff", "eol", "--", path],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    return {line.split(": ")[1]: line.split(": ")[2] for line in r.stdout.splitlines()}


def check():
    for p in ("assets/logo.png", "x/y/z.png", "firmware.bin", "assets/firmware.bin"):
        a = attrs(p)
        assert a["text"] == "unset" and a["diff"] == "unset", (p, a)
    for p in ("scripts/deploy.sh", "deep/dir/run.sh"):
        a = attrs(p)
        assert a["eol"] == "lf" and a["text"] in ("set", "auto", "unspecified"), (p, a)
        assert a["text"] != "unset"
    for p in ("scripts/build.bat", "a/b.bat"):
        a = attrs(p)
        assert a["eol"] == "crlf" and a["text"] != "unset", (p, a)
    assert attrs("README.md")["eol"] == "unspecified"


def test_attributes_in_effect():
    check()


def test_gitattributes_committed():
    r = subprocess.run(["git", "-C", REPO, "ls-tree", "--name-only", "HEAD"], capture_output=True, text=True)
    assert ".gitattributes" in r.stdout.split()
    r = subprocess.run(["git", "-C", REPO, "status", "--porcelain", "--", ".gitattributes"], capture_output=True, text=True)
    assert r.stdout.strip() == ""
    check()
