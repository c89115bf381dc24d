#!/bin/bash
set -e
cat > /app/chisq.py <<'PY'
import csv
import json
import sys
import math


def gammaq(a, x):
    """Regularized upper incomplete gamma Q(a, x)."""
    if x <= 0:
        return 1.0
    gln = math.lgamma(a)
    if x < a + 1:
        ap, s, d = a, 1.0 / a, 1.0 / a
        for _ in range(10000):
            ap += 1
            d *= x / ap
            s += d
            if abs(d) < abs(s) * 1e-16:
                break
        return 1.0 - s * math.exp(-x + a * math.log(x) - gln)
    b = x + 1 - a
    c, d = 1e300, 1 / b
    h = d
    for i in range(1, 10000):
        an = -i * (i - a)
        b += 2
        d = an * d + b
        d = 1e-300 if abs(d) < 1e-300 else d
        c = b + an / c
        c = 1e-300 if abs(c) < 1e-300 else c
        d = 1 / d
        de = d * c
        h *= de
        if abs(de - 1) < 1e-16:
            break
    return math.exp(-x + a * math.log(x) - gln) * h


def chisq(rows, rcol, ccol):
    pairs = [(r[rcol], r[ccol]) for r in rows if r[rcol].strip() and r[ccol].strip()]
    rlab = sorted({a for a, _ in pairs})
    clab = sorted({b for _, b in pairs})
    obs = [[sum(1 for a, b in pairs if a == x and b == y) for y in clab] for x in rlab]
    n = len(pairs)
    rs = [sum(row) for row in obs]
    cs = [sum(obs[i][j] for i in range(len(rlab))) for j in range(len(clab))]
    exp = [[rs[i] * cs[j] / n for j in range(len(clab))] for i in range(len(rlab))]
    stat = sum((obs[i][j] - exp[i][j]) ** 2 / exp[i][j] for i in range(len(rlab)) for j in range(len(clab)))
    df = (len(rlab) - 1) * (len(clab) - 1)
    return {"rows": rlab, "columns": clab, "observed": obs, "n": n, "chi2": stat, "df": df,
            "p_value": gammaq(df / 2, stat / 2),
            "cramers_v": math.sqrt(stat / (n * min(len(rlab) - 1, len(clab) - 1))),
            "min_expected": min(min(row) for row in exp)}


if __name__ == "__main__":
    rows = list(csv.DictReader(open(sys.argv[1], newline="")))
    print(json.dumps(chisq(rows, sys.argv[2], sys.argv[3])))
PY
python3 /app/chisq.py /app/survey.csv region drink > /app/chisq_result.json
