#!/bin/bash
set -e
python3 - <<'PY'
import csv
import datetime as dt
from decimal import Decimal


def bank_amount(s):
    s = s.strip().replace(",", "")
    neg = s.startswith("(") and s.endswith(")")
    v = Decimal(s.strip("()"))
    return -v if neg else v


def reconcile(bank_rows, ledger_rows):
    bank = [(dt.datetime.strptime(b["date"], "%d/%m/%Y").date(), b["txn_id"], bank_amount(b["amount"])) for b in bank_rows]
    ledger = [(dt.date.fromisoformat(l["date"]), l["entry_id"], Decimal(l["amount"])) for l in ledger_rows]
    used, matches = set(), []
    for d, bid, amt in sorted(bank):
        cands = [(abs((ld - d).days), eid) for ld, eid, la in ledger
                 if eid not in used and la == amt and abs((ld - d).days) <= 3]
        if cands:
            _, eid = min(cands)
            used.add(eid)
            matches.append((bid, eid))
    matched_b = {b for b, _ in matches}
    return (sorted(matches), sorted(b[1] for b in bank if b[1] not in matched_b),
            sorted(l[1] for l in ledger if l[1] not in used))


matches, ub, ul = reconcile(list(csv.DictReader(open("/app/bank.csv", newline=""))),
                            list(csv.DictReader(open("/app/ledger.csv", newline=""))))
with open("/app/matches.csv", "w", newline="") as f:
    w = csv.writer(f)
    w.writerow(["txn_id", "entry_id"])
    w.writerows(matches)
open("/app/unmatched_bank.txt", "w").write("".join(x + "\n" for x in ub))
open("/app/unmatched_ledger.txt", "w").write("".join(x + "\n" for x in ul))
PY
