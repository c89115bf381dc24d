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


import csv
import json
import random
import subprocess
import tempfile
from pathlib import Path

MAIN = {'rows': ['east', 'north', 'south', 'west'], 'columns': ['coffee', 'juice', 'tea'], 'observed': [[22, 19, 24], [21, 14, 37], [32, 16, 11], [23, 11, 25]], 'n': 255, 'chi2': 17.654095357525435, 'df': 6, 'p_value': 0.007157346883070138, 'cramers_v': 0.18605341504538386, 'min_expected': 13.882352941176471}


def check_counts(got, want):
    assert got["rows"] == want["rows"] and got["columns"] == want["columns"]
    assert got["observed"] == want["observed"]
    assert got["n"] == want["n"] and got["df"] == want["df"]


def check_stats(got, want):
    for k in ("chi2", "cramers_v", "min_expected"):
        assert math.isclose(float(got[k]), want[k], rel_tol=1e-6, abs_tol=1e-12), (k, got[k], want[k])
    # p_value comes from a numerical series/continued fraction: "about 6 significant digits"
    assert math.isclose(float(got["p_value"]), want["p_value"], rel_tol=1e-5, abs_tol=1e-12), (got["p_value"], want["p_value"])


def hidden():
    r = random.Random(5)
    out = []
    for nr, nc, n in ((2, 2, 80), (3, 5, 400), (5, 2, 150)):
        a = [f"r{i}" for i in range(nr)]
        b = [f"c{j}" for j in range(nc)]
        rows = [{"id": str(k), "x": r.choice(a), "y": r.choice(b) if r.random() > 0.02 else ""} for k in range(n)]
        d = Path(tempfile.mkdtemp())
        with open(d / "t.csv", "w", newline="") as f:
            w = csv.DictWriter(f, ["id", "y", "x"])
            w.writeheader()
            w.writerows(rows)
        p = subprocess.run(["python3", "/app/chisq.py", str(d / "t.csv"), "x", "y"], capture_output=True, text=True, timeout=30)
        assert p.returncode == 0, p.stderr
        out.append((json.loads(p.stdout), chisq(rows, "x", "y")))
    return out


def test_contingency_table():
    check_counts(json.loads(Path("/app/chisq_result.json").read_text()), MAIN)
    for got, want in hidden():
        check_counts(got, want)


def test_statistic_and_p_value():
    check_stats(json.loads(Path("/app/chisq_result.json").read_text()), MAIN)
    for got, want in hidden():
        check_stats(got, want)
