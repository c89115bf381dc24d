import math
import random
import statistics


def interp(s, q):
    h = (len(s) - 1) * q
    lo = math.floor(h)
    hi = min(lo + 1, len(s) - 1)
    return s[lo] + (h - lo) * (s[hi] - s[lo])


def bootstrap(data, seed, b):
    rng = random.Random(seed)
    n = len(data)
    stats = sorted(statistics.median([data[rng.randrange(n)] for _ in range(n)]) for _ in range(b))
    return {"median": statistics.median(data), "ci_low": interp(stats, 0.025), "ci_high": interp(stats, 0.975)}


import json
import subprocess
import tempfile
from pathlib import Path

MAIN = {'median': 53.99, 'ci_low': 48.17, 'ci_high': 61.28}


def check(got, want):
    for k in ("median", "ci_low", "ci_high"):
        assert math.isclose(float(got[k]), want[k], rel_tol=1e-9, abs_tol=1e-9), (k, got, want)


def test_result_file():
    check(json.loads(Path("/app/ci.json").read_text()), MAIN)


def test_script_hidden_data():
    r = random.Random(99)
    for n, seed, b in ((40, 7, 500), (75, 123, 1000)):
        data = [round(r.uniform(0, 100), 3) for _ in range(n)]
        d = Path(tempfile.mkdtemp())
        (d / "x.txt").write_text("\n".join(map(str, data)) + "\n\n")
        p = subprocess.run(["python3", "/app/bootstrap.py", str(d / "x.txt"), str(seed), str(b)],
                           capture_output=True, text=True, timeout=60)
        assert p.returncode == 0, p.stderr
        check(json.loads(p.stdout), bootstrap(data, seed, b))
