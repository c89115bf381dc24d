#!/bin/bash
python3 - <<'PY'
import hmac, hashlib, json
key = open("/app/audit/ledger.key", "rb").read()
prev, pseq, bad = "0" * 64, 0, []
lines = open("/app/audit/ledger.log").read().splitlines()
for i, l in enumerate(lines, 1):
    seq, ts, msg, hv = l.split("|")
    ok = hmac.compare_digest(hmac.new(key, f"{prev}|{seq}|{ts}|{msg}".encode(), hashlib.sha256).hexdigest(), hv)
    if not ok or not seq.isdigit() or int(seq) != pseq + 1:
        bad.append(i)
    prev = hv
    pseq = int(seq) if seq.isdigit() else pseq
json.dump({"first_bad_seq": int(lines[bad[0] - 1].split("|")[0]), "bad_lines": bad}, open("/app/audit/report.json", "w"))
PY
