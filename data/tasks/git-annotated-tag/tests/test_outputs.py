import subprocess

REPO = "/app/repo"


def git(*args):
    r = subprocess.run(["git", "-C", REPO, *args], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    return r.stdout.strip()


def release_commit():
    shas = git("log", "main", "--format=%H %s").splitlines()
    match = [line.split()[0] for line in shas if line.split(" ", 1)[1] == "Release 1.2.0"]
    assert len(match) == 1
    assert len(shas) == 7, "history of main was changed"
    return match[0]


def test_tag_points_to_release_commit():
    assert git("rev-parse", "v1.2.0^{commit}") == release_commit()
    assert git("rev-parse", "v1.1.0^{commit}") == git("rev-parse", "main~4")


def test_tag_is_annotated_with_message():
    assert git("cat-file", "-t", "v1.2.0") == "tag"
    assert git("tag", "-l", "--format=%(contents)", "v1.2.0").strip() == "Version 1.2.0"
    assert git("rev-parse", "v1.2.0^{commit}") == release_commit()
