#!/bin/bash
set -e
python3 - <<'PY'
p = "/app/invoice.py"
s = open(p).read()
start = s.index("def main(path):")
end = s.index('if __name__ == "__main__":')
s = s[:start] + '''def cents(x):
    return x.quantize(Decimal("0.01"), rounding=ROUND_HALF_UP)


def main(path):
    inv = json.load(open(path))
    subtotal = Decimal("0")
    for line in inv["lines"]:
        price = Decimal(line["unit_price"])
        disc = Decimal(line.get("discount_pct", "0"))
        amount = cents(price * line["qty"] * (1 - disc / 100))
        subtotal += amount
        print(f"{line['sku']} {amount}")
    tax = cents(subtotal * Decimal(inv["tax_pct"]) / 100)
    print(f"subtotal {subtotal}")
    print(f"tax {tax}")
    print(f"total {subtotal + tax}")


''' + s[end:]
s = s.replace("import json\n", "import json\nfrom decimal import Decimal, ROUND_HALF_UP, getcontext\n")
s = s.replace("import sys\n", "import sys\n\ngetcontext().prec = 60\n", 1)
open(p, "w").write(s)
PY
