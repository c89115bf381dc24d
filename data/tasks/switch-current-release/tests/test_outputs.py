import os
from pathlib import Path


def test_current_points_to_newest():
    cur = Path("/app/current")
    assert cur.is_symlink()
    assert os.path.realpath(cur) == "/app/releases/v1.10.0"
    assert (cur / "VERSION").read_text() == "1.10.0\n"
    rel = Path("/app/releases")
    assert sorted(os.listdir(rel)) == ["v1.10.0", "v1.2.0", "v1.3.0", "v1.9.4"]
    for v in ["1.2.0", "1.3.0", "1.9.4", "1.10.0"]:
        d = rel / f"v{v}"
        assert not d.is_symlink()
        assert sorted(os.listdir(d)) == ["VERSION", "app.py"]
        assert (d / "VERSION").read_text() == f"{v}\n"
