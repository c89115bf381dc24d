import csv
from pathlib import Path

MATCHES = [('B001', 'L001'), ('B002', 'L002'), ('B003', 'L003'), ('B004', 'L004'), ('B005', 'L005'), ('B006', 'L006'), ('B007', 'L007'), ('B008', 'L008'), ('B009', 'L009'), ('B010', 'L010'), ('B014', 'L012'), ('B018', 'L015'), ('B019', 'L016'), ('B021', 'L017'), ('B022', 'L018'), ('B023', 'L019'), ('B025', 'L020'), ('B026', 'L021'), ('B029', 'L023'), ('B031', 'L024'), ('B034', 'L026'), ('B035', 'L027'), ('B036', 'L028'), ('B037', 'L029'), ('B038', 'L030'), ('B041', 'L032'), ('B042', 'L033'), ('B043', 'L034'), ('B045', 'L035')]
UNMATCHED_BANK = ['B011', 'B012', 'B013', 'B015', 'B016', 'B017', 'B020', 'B024', 'B027', 'B028', 'B030', 'B032', 'B033', 'B039', 'B040', 'B044']
UNMATCHED_LEDGER = ['L011', 'L013', 'L014', 'L022', 'L025', 'L031', 'L036', 'L037', 'L038', 'L039']


def ids(path):
    return sorted(l.strip() for l in Path(path).read_text().splitlines() if l.strip())


def test_matches():
    rows = list(csv.reader(Path("/app/matches.csv").read_text().splitlines()))
    assert [c.strip() for c in rows[0]] == ["txn_id", "entry_id"]
    assert sorted((a.strip(), b.strip()) for a, b in rows[1:] if a.strip()) == MATCHES


def test_unmatched_bank():
    assert ids("/app/unmatched_bank.txt") == UNMATCHED_BANK


def test_unmatched_ledger():
    assert ids("/app/unmatched_ledger.txt") == UNMATCHED_LEDGER
