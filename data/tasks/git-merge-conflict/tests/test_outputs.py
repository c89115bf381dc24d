import subprocess
from pathlib import Path

REPO = "/app/calc"
MAIN_HEAD = "13f2fa748b9ec28bf52671bf8e97245573fc495d"
FEATURE_HEAD = "d0c5b6bcef5d05cc3b18e11d62b3f098858676ec"


def git(*args):
    return subprocess.run(["git", "-C", REPO, *args], capture_output=True, text=True)


def test_no_conflict_markers():
    for name in ("converter.py", "CHANGELOG.md"):
        text = Path(REPO, name).read_text()
        assert "<<<<<<<" not in text and ">>>>>>>" not in text and "=======" not in text, name
    assert git("diff", "--name-only", "--diff-filter=U").stdout.strip() == ""
    unreleased = Path(REPO, "CHANGELOG.md").read_text().split("## Unreleased")[1].split("## 0.1.0")[0]
    assert sorted(l.strip() for l in unreleased.splitlines() if l.strip()) == ["- kg_to_lb", "- miles_to_km"]


def test_functions_from_both_sides():
    code = ("import converter as c; print(c.km_to_miles(10), c.kg_to_lb(3), c.miles_to_km(26.2))")
    # run against the committed tree so an uncommitted resolution does not count
    show = git("show", "HEAD:converter.py")
    assert show.returncode == 0
    out = subprocess.run(["python3", "-c", code], cwd=REPO, capture_output=True, text=True, timeout=30)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["6.214", "6.614", "42.165"]
    assert show.stdout == Path(REPO, "converter.py").read_text()


def test_merge_commit():
    parents = git("rev-list", "--parents", "-n", "1", "HEAD").stdout.split()[1:]
    assert parents == [MAIN_HEAD, FEATURE_HEAD]
    assert git("rev-parse", "--abbrev-ref", "HEAD").stdout.strip() == "main"
    assert not Path(REPO, ".git", "MERGE_HEAD").exists()
