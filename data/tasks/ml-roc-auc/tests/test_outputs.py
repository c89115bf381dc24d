import random
import re
import subprocess
import tempfile
from pathlib import Path


def ref(rows):
    pos = [s for l, s in rows if l == 1]
    neg = [s for l, s in rows if l == 0]
    neg.sort()
    import bisect
    w = 0.0
    for s in pos:
        lo, hi = bisect.bisect_left(neg, s), bisect.bisect_right(neg, s)
        w += lo + 0.5 * (hi - lo)
    return w / (len(pos) * len(neg))


def run(rows, fmt="{:.6f}"):
    with tempfile.TemporaryDirectory() as d:
        f = Path(d, "s.csv")
        f.write_text("label,score\n" + "".join(f"{l},{fmt.format(s)}\n" for l, s in rows))
        return subprocess.run(["python3", "/app/auc.py", str(f)], capture_output=True, text=True, timeout=60)


def check(rows, fmt):
    rows = [(l, float(fmt.format(s))) for l, s in rows]
    out = run(rows, fmt)
    assert out.returncode == 0, out.stderr
    got = out.stdout.strip()
    assert re.fullmatch(r"[01]\.\d{6}", got), got
    assert abs(float(got) - ref(rows)) <= 1.5e-6, (got, ref(rows))


def test_auc_without_ties():
    rng = random.Random(1)
    for n in (50, 777):
        rows = [(l, rng.gauss(0.8 * l, 1)) for l in (rng.randint(0, 1) for _ in range(n))]
        check(rows, "{:.9f}")


def test_auc_with_ties():
    rng = random.Random(2)
    for n, fmt in ((40, "{:.0f}"), (900, "{:.1f}"), (3000, "{:.2f}")):
        rows = [(l, rng.gauss(0.5 * l, 1)) for l in (int(rng.random() < 0.3) for _ in range(n))]
        check(rows, fmt)
    out = run([(1, 0.5), (0, 0.5), (1, 0.5), (0, 0.5)], "{}")
    assert out.stdout.strip() == "0.500000"


def test_single_class_and_large():
    out = run([(1, 0.3), (1, 0.9), (1, 0.1)])
    assert out.returncode == 2 and out.stdout.strip() == "undefined"
    rng = random.Random(3)
    rows = [(l, rng.gauss(0.3 * l, 1)) for l in (rng.randint(0, 1) for _ in range(200000))]
    check(rows, "{:.3f}")
