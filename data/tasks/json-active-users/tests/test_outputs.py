import json
from pathlib import Path

EXPECTED = {"data": ["cleo@example.com", "ivo@example.com", "nia@example.com"], "infra": ["gus@example.com", "moe@example.com"], "web": ["ana@example.com", "lea@example.com", "oz@example.com"]}


def load():
    return json.loads(Path("/app/active_by_team.json").read_text())


def test_valid_json():
    assert isinstance(load(), dict)


def test_teams():
    assert sorted(load()) == sorted(EXPECTED)


def test_emails():
    assert load() == EXPECTED
