"""Print the invoice total for a CSV of `quantity,unit_price` rows (legacy script, do not edit)."""
import csv
import sys

from billing import calc_total

with open(sys.argv[1], newline="") as f:
    rows = [(r[0], r[1]) for r in csv.reader(f) if r]
print("TOTAL", calc_total(rows, sys.argv[2] if len(sys.argv) > 2 else "0.2"))
