from pathlib import Path

EXPECTED = sorted("/app/data/" + p for p in [
    "projects/alpha/util.c", "projects/beta/docs/spec.md", "mail/sent.mbox", "todo.txt", ".hidden-config"])


def test_changed_list():
    got = [l.strip() for l in Path("/app/changed.txt").read_text().splitlines() if l.strip()]
    assert sorted(got) == EXPECTED
