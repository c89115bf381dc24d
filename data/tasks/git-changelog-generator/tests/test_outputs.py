import os
import subprocess
import tempfile


def sh(cwd, *args, env=None):
    r = subprocess.run(args, cwd=cwd, capture_output=True, text=True, env=env)
    assert r.returncode == 0, r.stderr
    return r.stdout


def changelog(cwd):
    r = subprocess.run(["/app/changelog"], cwd=cwd, capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    return r.stdout


def short(cwd, rev):
    return sh(cwd, "git", "rev-parse", "--short=7", rev).strip()


def build_hidden():
    d = tempfile.mkdtemp()
    env = dict(os.environ, GIT_AUTHOR_NAME="A", GIT_AUTHOR_EMAIL="a@x", GIT_COMMITTER_NAME="A", GIT_COMMITTER_EMAIL="a@x")
    sh(d, "git", "init", "-q", "-b", "main")
    n = [0]

    def commit(msg, date=None):
        n[0] += 1
        with open(os.path.join(d, "f.txt"), "a") as f:
            f.write(f"{n[0]}\n")
        e = dict(env, GIT_AUTHOR_DATE=date or f"2024-02-{n[0]:02d}T12:00:00Z", GIT_COMMITTER_DATE=date or f"2024-02-{n[0]:02d}T12:00:00Z")
        sh(d, "git", "add", ".", env=e)
        sh(d, "git", "commit", "-q", "-m", msg, env=e)
        return short(d, "HEAD")

    h = {}
    h[1] = commit("feat(core): first feature")
    h[2] = commit("fix: early bug")
    sh(d, "git", "tag", "v1.9.0")
    h[3] = commit("feat:missing space")
    h[4] = commit("Feat: capital type")
    h[5] = commit("perf(io)!: faster reads")
    h[6] = commit("fix(api): null check\n\nDetails here.\nBREAKING CHANGE: returns None now")
    h[7] = commit("feat: late evening feature", date="2024-03-01T23:30:00-05:00")
    sh(d, "git", "tag", "-a", "v1.10.0", "-m", "ten")
    sh(d, "git", "tag", "v1.10")
    sh(d, "git", "tag", "release-2")
    sh(d, "git", "checkout", "-q", "-b", "side")
    commit("feat: side only")
    sh(d, "git", "tag", "v9.9.9")
    sh(d, "git", "checkout", "-q", "main")
    h[8] = commit("docs: notes\n\nBREAKING CHANGE: not really but counts")
    h[9] = commit("fix(ui): button  spacing")
    sh(d, "git", "tag", "v2.0.0-rc.1")
    h[10] = commit("chore: bump")
    sh(d, "git", "tag", "v2.0.0")
    return d, h


def test_demo_repository():
    d = "/app/demo"
    out = changelog(d)
    assert out == demo_expected(d)
    # a clone of the demo with two more commits: the output must follow the repository, not a fixed text
    w = os.path.join(tempfile.mkdtemp(), "w")
    sh("/", "git", "clone", "-q", d, w)
    env = dict(os.environ, GIT_AUTHOR_NAME="B", GIT_AUTHOR_EMAIL="b@x", GIT_COMMITTER_NAME="B", GIT_COMMITTER_EMAIL="b@x",
               GIT_AUTHOR_DATE="2024-05-01T08:00:00Z", GIT_COMMITTER_DATE="2024-05-01T08:00:00Z")
    sh(w, "git", "commit", "-q", "--allow-empty", "-m", "fix(parser): late fix", env=env)
    sh(w, "git", "commit", "-q", "--allow-empty", "-m", "feat(api)!: new endpoint", env=env)
    head = demo_expected(w, "HEAD~2").split("## Unreleased\n\n### Features\n")
    want = (head[0] + f"## Unreleased\n\n### Breaking Changes\n- api: new endpoint ({short(w, 'HEAD')})\n\n### Features\n"
            + head[1].replace("\n\n## v1.0.0", f"\n\n### Bug Fixes\n- parser: late fix ({short(w, 'HEAD~1')})\n\n## v1.0.0", 1))
    assert changelog(w) == want


def demo_expected(d, tip="HEAD"):
    return f"""# Changelog

## Unreleased

### Features
- support arrays ({short(d, tip)})

## v1.0.0 (2024-01-01)

### Breaking Changes
- typo in help ({short(d, f"{tip}~2")})
- drop python 2 support ({short(d, f"{tip}~3")})

### Features
- cli: add --verbose flag ({short(d, f"{tip}~4")})

## v0.1.0 (2024-01-01)

### Features
- add parser ({short(d, f"{tip}~7")})

### Bug Fixes
- parser: handle empty input ({short(d, f"{tip}~6")})
"""


def test_hidden_repository():
    d, h = build_hidden()
    out = changelog(d)
    assert out == f"""# Changelog

## v2.0.0 (2024-02-11)

### Breaking Changes
- docs notes placeholder

### Bug Fixes
- ui: button  spacing ({h[9]})

## v1.10.0 (2024-03-02)

### Breaking Changes
- api: null check ({h[6]})
- io: faster reads ({h[5]})

### Features
- late evening feature ({h[7]})

## v1.9.0 (2024-02-02)

### Features
- core: first feature ({h[1]})

### Bug Fixes
- early bug ({h[2]})
""".replace("- docs notes placeholder", f"- notes ({h[8]})")
