import json
from pathlib import Path

EXPECTED = {"200": 223, "301": 16, "304": 30, "403": 36, "404": 50, "500": 14, "502": 31}


def load():
    return json.loads(Path("/app/status_counts.json").read_text())


def test_valid_json_object():
    assert isinstance(load(), dict)


def test_status_codes():
    assert sorted(str(k) for k in load()) == sorted(EXPECTED)


def test_counts():
    got = {str(k): int(v) for k, v in load().items()}
    assert got == EXPECTED
