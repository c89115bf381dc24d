"""Average order value per customer.

    python3 report.py ORDERS.jsonl

Each line of ORDERS.jsonl is a JSON object with "customer", "price" (unit price) and,
optionally, "qty" (quantity, default 1) and "status" ("paid" by default, or "refunded").
Refunded orders are ignored. Prints one line per customer, sorted by customer name:
    <customer> <number of paid orders> <average paid order value, 2 decimals>
where an order's value is price * qty. A customer whose orders are all refunded
prints "n/a" instead of the average (and 0 orders).
"""
import json
import sys
from collections import defaultdict


def load(path):
    with open(path) as f:
        return [json.loads(line) for line in f if line.strip()]


def summarize(orders):
    totals = defaultdict(float)
    counts = defaultdict(int)
    for o in orders:
        totals[o["customer"]] += 0
        if o.get("status") == "refunded":
            continue
        totals[o["customer"]] += o["price"] * o["qty"]
        counts[o["customer"]] += 1
    rows = []
    for customer in sorted(totals):
        avg = totals[customer] / counts[customer]
        rows.append(f"{customer} {counts[customer]} {avg:.2f}")
    return rows


if __name__ == "__main__":
    for row in summarize(load(sys.argv[1])):
        print(row)
