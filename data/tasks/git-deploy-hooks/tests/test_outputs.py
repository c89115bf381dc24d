import os
import subprocess
import tempfile
from pathlib import Path

BARE = "/app/git/site.git"
WWW = Path("/app/www")
ENV = dict(os.environ, GIT_AUTHOR_NAME="T", GIT_AUTHOR_EMAIL="t@x", GIT_COMMITTER_NAME="T", GIT_COMMITTER_EMAIL="t@x")


def git(cwd, *args, check=True):
    r = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, env=ENV, timeout=120)
    if check:
        assert r.returncode == 0, r.stderr
    return r


def clone():
    d = tempfile.mkdtemp()
    git(d, "clone", "-q", BARE, "w")
    return os.path.join(d, "w")


def commit(w, files, msg, signoff=True):
    for name, content in files.items():
        p = Path(w, name)
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_bytes(content if isinstance(content, bytes) else content.encode())
    git(w, "add", "-A")
    git(w, "commit", "-q", *(["-s"] if signoff else []), "-m", msg)
    return git(w, "rev-parse", "HEAD").stdout.strip()


def push(w, *args):
    return git(w, "push", "-q", "origin", *args, check=False)


def main_sha():
    return git(BARE, "rev-parse", "main").stdout.strip()


def test_policy_rejections():
    w = clone()
    start = main_sha()
    commit(w, {"src/a.md": "# A\n"}, "unsigned change", signoff=False)
    r = push(w, "HEAD:main")
    assert r.returncode != 0 and main_sha() == start
    git(w, "reset", "-q", "--hard", start)
    commit(w, {"src/ok.md": "# ok\n"}, "fine", signoff=True)
    commit(w, {"big.bin": os.urandom(60000)}, "big file", signoff=True)
    assert push(w, "HEAD:main").returncode != 0 and main_sha() == start
    git(w, "reset", "-q", "--hard", start)
    commit(w, {"notes.txt": "x" * 50000}, "exactly the limit")
    ok = push(w, "HEAD:main")
    assert ok.returncode == 0, ok.stderr
    first = main_sha()
    w2 = clone()
    git(w2, "reset", "-q", "--hard", start)
    commit(w2, {"src/rewrite.md": "# rewrite\n"}, "diverged history")
    assert push(w2, "--force", "HEAD:main").returncode != 0 and main_sha() == first
    assert push(w2, "--delete", "main").returncode != 0 and main_sha() == first
    commit(w2, {"src/x.md": "# x\n"}, "unsigned on a feature branch", signoff=False)
    assert push(w2, "--force", "HEAD:refs/heads/feature").returncode == 0
    assert git(BARE, "rev-parse", "feature").returncode == 0


def test_deploys_and_switches_current():
    w = clone()
    sha = commit(w, {"src/news.md": "# News\nDeploys work.\n"}, "add news page")
    r = push(w, "HEAD:main")
    assert r.returncode == 0, r.stderr
    cur = WWW / "current"
    assert cur.is_symlink()
    assert os.path.realpath(cur) == os.path.realpath(WWW / "releases" / sha)
    assert (cur / "public/news.html").read_text() == "<h1>News</h1>\n<p>Deploys work.</p>\n"
    assert (cur / "public/index.html").exists()
    assert f"{sha} ok" in (WWW / "deploy.log").read_text().splitlines()
    before = os.readlink(cur)
    commit(w, {"src/side.md": "# side\n"}, "side work")
    assert push(w, "HEAD:refs/heads/side-branch").returncode == 0
    assert os.readlink(cur) == before


def test_failed_build_and_retention():
    w = clone()
    shas = []
    for i in range(4):
        shas.append(commit(w, {f"src/p{i}.md": f"# Page {i}\n"}, f"page {i}"))
        assert push(w, "HEAD:main").returncode == 0
    rel = sorted(os.listdir(WWW / "releases"))
    assert rel == sorted(shas[1:])
    assert os.path.realpath(WWW / "current") == os.path.realpath(WWW / "releases" / shas[3])
    bad = commit(w, {"build.sh": "#!/bin/sh\nexit 1\n"}, "break the build")
    r = push(w, "HEAD:main")
    assert r.returncode == 0, r.stderr
    assert main_sha() == bad
    assert os.path.realpath(WWW / "current") == os.path.realpath(WWW / "releases" / shas[3])
    assert not (WWW / "releases" / bad).exists()
    assert f"{bad} failed" in (WWW / "deploy.log").read_text().splitlines()
    assert sorted(os.listdir(WWW / "releases")) == sorted(shas[1:])
    assert (WWW / "current/public/p3.html").read_text() == "<h1>Page 3</h1>\n"
