import json
import os


def load():
    return json.load(open("/app/audit.json"))


def test_missing_and_unexpected():
    d = load()
    assert d["missing"] == ["README", "static/logo.svg"]
    assert d["unexpected"] == ["lib/.cache/x.pyc", "static/shell.php"]


def test_modified():
    assert load()["modified"] == ["bin/server", "conf/app.yaml", "lib/auth.py"]
    assert os.path.exists("/app/deploy/static/shell.php")


def test_mode_changed():
    assert load()["mode_changed"] == ["bin/migrate", "conf/secrets.yaml"]
