import json
from pathlib import Path

FINAL = [{'id': 'acct-002', 'owner': 'zed', 'balance': 1, 'tier': 'gold'}, {'id': 'acct-003', 'owner': 'ana', 'balance': 1301, 'tier': 'gold', 'note': 'vip'}, {'id': 'acct-005', 'owner': 'cy', 'balance': 826, 'tier': 'gold'}, {'id': 'acct-009', 'owner': 'cy', 'balance': 1711, 'tier': 'gold', 'note': 'vip'}, {'id': 'acct-012', 'owner': 'bo', 'balance': 659, 'tier': 'gold', 'note': 'vip'}, {'id': 'acct-014', 'owner': 'zed', 'balance': 1, 'tier': 'gold'}, {'id': 'acct-016', 'owner': 'zed', 'balance': 1628, 'tier': 'basic'}, {'id': 'acct-020', 'owner': 'ana', 'balance': 824, 'tier': 'gold', 'note': 'vip'}, {'id': 'acct-021', 'owner': 'zed', 'balance': 1, 'tier': 'gold'}, {'id': 'acct-023', 'owner': 'bo', 'balance': 755, 'tier': 'basic'}, {'id': 'acct-025', 'owner': 'zed', 'balance': 1}, {'id': 'acct-027', 'owner': 'ana', 'balance': 178, 'tier': 'gold'}, {'id': 'acct-029', 'owner': 'di', 'balance': 1223, 'tier': 'gold', 'note': 'vip'}, {'owner': 'zed', 'balance': 1, 'tier': 'basic', 'note': 'new', 'id': 'acct-031'}, {'owner': 'ana', 'balance': 224, 'tier': 'basic', 'note': 'new', 'id': 'acct-035'}, {'owner': 'fay', 'balance': 500, 'tier': 'basic', 'note': 'vip', 'id': 'acct-037'}, {'owner': 'fay', 'balance': 490, 'tier': 'basic', 'note': 'new', 'id': 'acct-039'}, {'owner': 'ana', 'balance': 380, 'tier': 'basic', 'note': 'new', 'id': 'acct-041'}, {'owner': 'fay', 'balance': 110, 'tier': 'gold', 'note': 'new', 'id': 'acct-043'}]
ERRORS = [(1, 'missing'), (9, 'exists'), (23, 'missing'), (27, 'missing'), (31, 'missing'), (41, 'missing'), (43, 'missing'), (52, 'missing'), (53, 'missing'), (57, 'missing'), (60, 'missing'), (62, 'missing'), (65, 'missing'), (78, 'exists'), (89, 'missing'), (96, 'missing'), (99, 'missing'), (102, 'exists'), (104, 'missing'), (111, 'missing'), (114, 'missing'), (116, 'missing'), (128, 'missing'), (139, 'exists'), (145, 'missing'), (149, 'missing'), (160, 'missing'), (171, 'missing'), (174, 'exists'), (176, 'missing'), (183, 'exists'), (185, 'missing'), (191, 'missing'), (193, 'missing'), (196, 'missing'), (210, 'missing'), (213, 'missing'), (215, 'missing'), (221, 'missing'), (225, 'missing'), (227, 'missing'), (235, 'missing'), (240, 'missing'), (244, 'missing'), (245, 'exists')]


def load():
    data = json.loads(Path("/app/final.json").read_text())
    assert isinstance(data, list)
    return data


def test_final_ids():
    assert [r["id"] for r in load()] == [r["id"] for r in FINAL]


def test_final_records():
    got = load()
    assert len(got) == len(FINAL)
    for g, w in zip(got, FINAL):
        assert g == w, (g, w)


def test_error_log():
    lines = [l.split() for l in Path("/app/errors.txt").read_text().splitlines() if l.strip()]
    assert [(int(a), b) for a, b in lines] == ERRORS
