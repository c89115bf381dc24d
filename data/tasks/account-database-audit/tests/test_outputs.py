import hashlib
import json
from pathlib import Path


def audit():
    data = json.loads(Path("/app/audit.json").read_text())
    assert set(data) == {"uid0_accounts", "empty_passwords", "missing_shadow", "orphan_shadow",
                         "duplicate_uids", "missing_primary_group"}
    return data


def test_uid0_and_duplicates():
    a = audit()
    assert a["uid0_accounts"] == ["backup2", "toor"]
    assert {k: sorted(v) for k, v in a["duplicate_uids"].items()} == {
        "0": ["backup2", "root", "toor"], "1001": ["bob", "dave"]}


def test_passwords_and_shadow():
    a = audit()
    assert a["empty_passwords"] == ["carol", "frank", "ghost", "toor"]
    assert a["missing_shadow"] == ["erin", "gina"]
    assert a["orphan_shadow"] == ["ghost"]


def test_primary_groups():
    a = audit()
    assert a["missing_primary_group"] == ["carol", "erin"]
    assert "toor:x:0:0:backdoor:/root:/bin/bash" in Path("/app/rootfs/etc/passwd").read_text()
