import math


def _betacf(a, b, x):
    qab, qap, qam = a + b, a + 1.0, a - 1.0
    c, d = 1.0, 1.0 - qab * x / qap
    d = 1.0 / (d if abs(d) > 1e-300 else 1e-300)
    h = d
    for m in range(1, 1000):
        m2 = 2 * m
        aa = m * (b - m) * x / ((qam + m2) * (a + m2))
        d = 1.0 + aa * d
        d = 1.0 / (d if abs(d) > 1e-300 else 1e-300)
        c = 1.0 + aa / c
        c = c if abs(c) > 1e-300 else 1e-300
        h *= d * c
        aa = -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2))
        d = 1.0 + aa * d
        d = 1.0 / (d if abs(d) > 1e-300 else 1e-300)
        c = 1.0 + aa / c
        c = c if abs(c) > 1e-300 else 1e-300
        de = d * c
        h *= de
        if abs(de - 1.0) < 1e-15:
            break
    return h


def betainc(a, b, x):
    """Regularized incomplete beta I_x(a, b)."""
    if x <= 0:
        return 0.0
    if x >= 1:
        return 1.0
    lbt = math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b) + a * math.log(x) + b * math.log(1 - x)
    if x < (a + 1) / (a + b + 2):
        return math.exp(lbt) * _betacf(a, b, x) / a
    return 1.0 - math.exp(lbt) * _betacf(b, a, 1 - x) / b


def t_two_sided_p(t, df):
    return betainc(df / 2, 0.5, df / (df + t * t))


def t_cdf(t, df):
    p = 0.5 * t_two_sided_p(t, df)
    return 1 - p if t > 0 else p


def t_ppf(q, df):
    lo, hi = -1e3, 1e3
    for _ in range(200):
        mid = (lo + hi) / 2
        if t_cdf(mid, df) < q:
            lo = mid
        else:
            hi = mid
    return (lo + hi) / 2


def welch(a, b):
    na, nb = len(a), len(b)
    ma, mb = sum(a) / na, sum(b) / nb
    va = sum((x - ma) ** 2 for x in a) / (na - 1)
    vb = sum((x - mb) ** 2 for x in b) / (nb - 1)
    se2 = va / na + vb / nb
    t = (ma - mb) / math.sqrt(se2)
    df = se2 ** 2 / ((va / na) ** 2 / (na - 1) + (vb / nb) ** 2 / (nb - 1))
    q = t_ppf(0.975, df)
    return {"mean_a": ma, "mean_b": mb, "t": t, "df": df, "p_value": t_two_sided_p(t, df),
            "ci_low": ma - mb - q * math.sqrt(se2), "ci_high": ma - mb + q * math.sqrt(se2)}


import json
import random
import subprocess
import tempfile
from pathlib import Path

MAIN = {'mean_a': 23.228333333333335, 'mean_b': 19.39666666666667, 't': 2.6143814475911427, 'df': 37.112339396815344, 'p_value': 0.01284159371069837, 'ci_low': 0.8623597424166207, 'ci_high': 6.800973590916714}


def close(got, want, keys, rel=1e-6, abs_=1e-9):
    for k in keys:
        assert math.isclose(float(got[k]), want[k], rel_tol=rel, abs_tol=abs_), (k, got[k], want[k])


def hidden():
    r = random.Random(7)
    cases = []
    for na, nb, mu, sd in ((5, 9, 1.0, 3.0), (30, 12, -0.4, 0.5), (8, 8, 0.0, 1.0)):
        a = [round(r.gauss(0, 1), 3) for _ in range(na)]
        b = [round(r.gauss(mu, sd), 3) for _ in range(nb)]
        d = Path(tempfile.mkdtemp())
        (d / "a.txt").write_text("\n".join(map(str, a)) + "\n")
        (d / "b.txt").write_text("\n".join(map(str, b)) + "\n")
        p = subprocess.run(["python3", "/app/welch.py", str(d / "a.txt"), str(d / "b.txt")],
                           capture_output=True, text=True, timeout=30)
        assert p.returncode == 0, p.stderr
        cases.append((json.loads(p.stdout), welch(a, b)))
    return cases


def test_statistic_and_df():
    close(json.loads(Path("/app/result.json").read_text()), MAIN, ["mean_a", "mean_b", "t", "df"])
    for got, want in hidden():
        close(got, want, ["mean_a", "mean_b", "t", "df"])


def test_p_value():
    close(json.loads(Path("/app/result.json").read_text()), MAIN, ["p_value"], rel=1e-5)
    for got, want in hidden():
        close(got, want, ["p_value"], rel=1e-5)


def test_confidence_interval():
    close(json.loads(Path("/app/result.json").read_text()), MAIN, ["ci_low", "ci_high"], rel=1e-5)
    for got, want in hidden():
        close(got, want, ["ci_low", "ci_high"], rel=1e-5, abs_=1e-7)
