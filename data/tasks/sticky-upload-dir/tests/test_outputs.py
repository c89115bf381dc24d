import os
import stat
from pathlib import Path

UP = Path("/app/public/uploads")


def test_sticky_world_writable():
    st = os.stat(UP)
    assert stat.S_ISDIR(st.st_mode)
    assert stat.S_IMODE(st.st_mode) == 0o1777
    assert (UP / "alice-report.txt").read_text() == "report from alice\n"
    assert (UP / "bob-notes.txt").read_text() == "notes from bob\n"
    assert sorted(os.listdir(UP)) == ["alice-report.txt", "bob-notes.txt"]
