import json
import random
import subprocess
from decimal import Decimal, ROUND_HALF_UP, getcontext

getcontext().prec = 80


def cents(x):
    return x.quantize(Decimal("0.01"), rounding=ROUND_HALF_UP)


def expected(inv):
    out, sub = [], Decimal(0)
    for ln in inv["lines"]:
        a = cents(Decimal(ln["unit_price"]) * ln["qty"] * (1 - Decimal(ln.get("discount_pct", "0")) / 100))
        sub += a
        out.append(f"{ln['sku']} {a:.2f}")
    tax = cents(sub * Decimal(inv["tax_pct"]) / 100)
    return out + [f"subtotal {sub:.2f}", f"tax {tax:.2f}", f"total {sub + tax:.2f}"]


def run(path):
    r = subprocess.run(["python3", "/app/invoice.py", str(path)], capture_output=True, text=True, timeout=30)
    assert r.returncode == 0, r.stderr
    return r.stdout.splitlines()


def test_sample_invoice():
    assert run("/app/sample.json") == ["PEN 1.01", "PAD 2.68", "INK 0.30", "subtotal 3.99", "tax 0.40", "total 4.39"]


def test_hidden_invoices(tmp_path):
    fixed = {"lines": [{"sku": "A", "unit_price": "0.125", "qty": 1},
                       {"sku": "B", "unit_price": "19.99", "qty": 3, "discount_pct": "15"},
                       {"sku": "C", "unit_price": "1234567890.995", "qty": 1000},
                       {"sku": "D", "unit_price": "0.0049", "qty": 1}],
             "tax_pct": "8.25"}
    rng = random.Random(4)
    invs = [fixed]
    for _ in range(25):
        lines = []
        for k in range(rng.randint(1, 8)):
            ln = {"sku": f"S{k}", "unit_price": f"{rng.randrange(1, 10**6)}.{rng.randrange(1000):03d}",
                  "qty": rng.randint(1, 500)}
            if rng.random() < 0.5:
                ln["discount_pct"] = rng.choice(["5", "12.5", "33.3", "50", "7.25"])
            lines.append(ln)
        invs.append({"lines": lines, "tax_pct": rng.choice(["0", "5", "7.5", "8.875", "19", "20"])})
    for i, inv in enumerate(invs):
        p = tmp_path / f"i{i}.json"
        p.write_text(json.dumps(inv))
        assert run(p) == expected(inv), i
