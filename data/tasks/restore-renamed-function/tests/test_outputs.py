import hashlib
import random
import subprocess
import sys
from decimal import Decimal, ROUND_HALF_UP


def expected(rows, rate):
    net = sum(Decimal(q) * Decimal(p) for q, p in rows)
    return str((net * (1 + Decimal(rate))).quantize(Decimal("0.01"), rounding=ROUND_HALF_UP))


def test_report_script_hidden_orders(tmp_path):
    with open("/app/report.py", "rb") as f:  # the legacy script must not be edited
        assert hashlib.sha256(f.read()).hexdigest() == "b6fe635348155dfd4e008f53953fb9b350bd99819d0da73bf83eead029e29713"
    rng = random.Random(31)
    for i in range(4):
        rows = [(str(rng.randint(1, 9)), "%d.%02d" % (rng.randint(0, 99), rng.randint(0, 99))) for _ in range(rng.randint(1, 6))]
        p = tmp_path / ("o%d.csv" % i)
        p.write_text("".join("%s,%s\n" % r for r in rows))
        rate = rng.choice(["0.2", "0.07", "0"])
        r = subprocess.run([sys.executable, "report.py", str(p), rate], cwd="/app", capture_output=True, text=True, timeout=30)
        assert r.returncode == 0, r.stderr
        assert r.stdout.strip() == "TOTAL " + expected(rows, rate)


def test_both_names_agree():
    code = ("import billing; rows=[('3','1.115'),('1','2.5')]; "
            "print(billing.calc_total(rows, '0.1'), billing.compute_total(rows, '0.1'), billing.calc_total is billing.compute_total or billing.calc_total(rows,'0')==billing.compute_total(rows,'0'))")
    r = subprocess.run([sys.executable, "-c", code], cwd="/app", capture_output=True, text=True, timeout=30)
    assert r.returncode == 0, r.stderr
    assert r.stdout.split() == ["6.43", "6.43", "True"]
