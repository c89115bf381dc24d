import subprocess
import tempfile

REPO = "/app/repo"
n = [0]


def try_commit(message):
    n[0] += 1
    with open(f"{REPO}/file{n[0]}.txt", "w") as f:
        f.write(str(n[0]))
    subprocess.run(["git", "-C", REPO, "add", f"file{n[0]}.txt"], check=True)
    with tempfile.NamedTemporaryFile("w", delete=False) as f:
        f.write(message)
    before = subprocess.run(["git", "-C", REPO, "rev-parse", "HEAD"], capture_output=True, text=True).stdout
    r = subprocess.run(["git", "-C", REPO, "-c", "user.name=T", "-c", "user.email=t@example.com",
                        "commit", "-q", "--cleanup=strip", "-F", f.name], capture_output=True, text=True)
    after = subprocess.run(["git", "-C", REPO, "rev-parse", "HEAD"], capture_output=True, text=True).stdout
    subprocess.run(["git", "-C", REPO, "reset", "-q"], check=True)
    return r.returncode == 0 and before != after


GOOD = ["feat: add login", "fix(api): handle empty body", "docs(readme-2): typo", "refactor!: drop py2",
        "feat(core)!: new config format\n\nLong body text here.\nMore lines.", "test: x",
        "chore: " + "a" * 65, "fix: trailing comment\n# a comment line\n", "Merge branch 'dev' into main"]
BAD = ["add login", "feat:add login", "feat:  double space", "Feat: capital type", "feature: nope",
       "fix(API): upper scope", "fix(): empty scope", "fix: ", "chore: " + "a" * 66,
       "fix: subject\nbody right after subject", "fix(api) : space before colon", "wip: stuff",
       "fix!(api): bang in wrong place"]


def test_valid_messages_accepted():
    assert not try_commit("add login"), "no hook installed"
    for m in GOOD:
        assert try_commit(m), m


def test_invalid_messages_rejected():
    assert try_commit("fix: a valid one")
    for m in BAD:
        assert not try_commit(m), m
