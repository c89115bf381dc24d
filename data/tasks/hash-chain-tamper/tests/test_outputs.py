import json


def load():
    return json.load(open("/app/audit/report.json"))


def test_first_bad():
    assert int(load()["first_bad_seq"]) == 37


def test_bad_lines():
    # line 37: edited message (its stored hash is kept, so line 38 still chains); line 70 (seq 71): seq 70 deleted; line 100 (forged "101") and line 101 (real seq 101,
    # whose prev hash no longer matches and whose seq repeats)
    assert load()["bad_lines"] == [37, 70, 100, 101]
