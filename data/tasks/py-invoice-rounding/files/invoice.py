"""Invoice totals.

    python3 invoice.py INVOICE.json

INVOICE.json: {"lines": [{"sku": str, "unit_price": "12.345" (string, any number of decimals),
"qty": int, "discount_pct": "10" (string, optional, default "0")}, ...], "tax_pct": "8.25"}

Rules (amounts in currency units, cents = 2 decimals, rounding always half up, i.e. 0.005 -> 0.01):
  line amount = unit_price * qty * (1 - discount_pct/100), rounded to cents
  subtotal    = sum of the rounded line amounts
  tax         = subtotal * tax_pct/100, rounded to cents
  total       = subtotal + tax
Prints one line `<sku> <line amount>` per line in input order, then `subtotal <x>`, `tax <x>`,
`total <x>`, every amount with exactly 2 decimals.
"""
import json
import sys


def main(path):
    inv = json.load(open(path))
    subtotal = 0.0
    for line in inv["lines"]:
        price = float(line["unit_price"])
        disc = float(line.get("discount_pct", "0"))
        amount = round(price * line["qty"] * (1 - disc / 100), 2)
        subtotal += amount
        print(f"{line['sku']} {amount:.2f}")
    tax = round(subtotal * float(inv["tax_pct"]) / 100, 2)
    print(f"subtotal {subtotal:.2f}")
    print(f"tax {tax:.2f}")
    print(f"total {subtotal + tax:.2f}")


if __name__ == "__main__":
    main(sys.argv[1])
