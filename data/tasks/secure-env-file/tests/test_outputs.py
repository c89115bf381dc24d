import os
import stat
from pathlib import Path


def test_not_world_accessible():
    check_content_unchanged()
    mode = os.stat("/app/secrets.env").st_mode
    assert not mode & (stat.S_IRWXO | stat.S_IRWXG), oct(mode)


def test_mode_is_600():
    check_content_unchanged()
    assert stat.S_IMODE(os.stat("/app/secrets.env").st_mode) == 0o600


def check_content_unchanged():
    # a guard, not a scored test: every scored test calls it, so an empty or destructive attempt scores 0
    assert Path("/app/secrets.env").read_text() == "DB_PASSWORD=hunter2\nAPI_TOKEN=tok_live_8f2a9c\n"
