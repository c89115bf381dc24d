#!/bin/bash
set -e
python3 - <<'PY'
import csv
import json
import datetime as dt
import math


def analyse(assign_rows, conv_rows):
    variants = {}
    first = {}
    for r in assign_rows:
        variants.setdefault(r["user_id"], set()).add(r["variant"])
        t = dt.datetime.fromisoformat(r["assigned_at"])
        if r["user_id"] not in first or t < first[r["user_id"]]:
            first[r["user_id"]] = t
    excluded = sorted(u for u, v in variants.items() if len(v) > 1)
    users = {u: next(iter(v)) for u, v in variants.items() if len(v) == 1}
    converted = set()
    for r in conv_rows:
        u = r["user_id"]
        if u not in users:
            continue
        t = dt.datetime.fromisoformat(r["converted_at"])
        if first[u] <= t <= first[u] + dt.timedelta(days=7):
            converted.add(u)
    n = {g: sum(1 for v in users.values() if v == g) for g in ("A", "B")}
    c = {g: sum(1 for u in converted if users[u] == g) for g in ("A", "B")}
    pa, pb = c["A"] / n["A"], c["B"] / n["B"]
    pool = (c["A"] + c["B"]) / (n["A"] + n["B"])
    z = (pb - pa) / math.sqrt(pool * (1 - pool) * (1 / n["A"] + 1 / n["B"]))
    se = math.sqrt(pa * (1 - pa) / n["A"] + pb * (1 - pb) / n["B"])
    tot = n["A"] + n["B"]
    chi2 = sum((n[g] - tot / 2) ** 2 / (tot / 2) for g in ("A", "B"))
    return {
        "excluded_users": len(excluded),
        "A": {"users": n["A"], "conversions": c["A"], "rate": pa},
        "B": {"users": n["B"], "conversions": c["B"], "rate": pb},
        "z": z, "p_value": math.erfc(abs(z) / math.sqrt(2)),
        "diff": pb - pa, "ci_low": pb - pa - 1.959963984540054 * se, "ci_high": pb - pa + 1.959963984540054 * se,
        "srm_chi2": chi2, "srm_p_value": math.erfc(math.sqrt(chi2 / 2)),
    }


res = analyse(list(csv.DictReader(open("/app/assignments.csv", newline=""))),
              list(csv.DictReader(open("/app/conversions.csv", newline=""))))
json.dump(res, open("/app/ab_result.json", "w"), indent=2)
PY
