#!/bin/bash
set -e
cd /app/pipeline
mkdir -p scripts
cat > scripts/clean.py <<'PY'
"""clean.py RAW RATES OUT: one raw day file -> clean csv (see README)."""
import csv
import sys

raw, rates_path, out = sys.argv[1:4]
rates = {r["currency"]: float(r["eur_rate"]) for r in csv.DictReader(open(rates_path, newline=""))}
rows, seen = [], set()
for r in csv.DictReader(open(raw, newline="")):
    if None in r or None in r.values() or not r["store"].strip() or r["order_id"] in seen:
        continue
    try:
        amt = float(r["amount"])
    except ValueError:
        continue
    if r["currency"] not in rates:
        continue
    seen.add(r["order_id"])
    rows.append([r["order_id"], r["store"], f"{amt * rates[r['currency']]:.2f}"])
with open(out, "w", newline="") as f:
    w = csv.writer(f)
    w.writerow(["order_id", "store", "amount_eur"])
    w.writerows(rows)
PY
cat > scripts/aggregate.py <<'PY'
"""aggregate.py TOTALS REPORT CLEAN...: daily totals and the report (see README)."""
import csv
import json
import os
import sys

totals_path, report_path, files = sys.argv[1], sys.argv[2], sorted(sys.argv[3:])
totals, by_store = [], {}
for path in files:
    day = os.path.basename(path)[len("sales_"):-len(".csv")]
    per = {}
    for r in csv.DictReader(open(path, newline="")):
        c, s = per.get(r["store"], (0, 0.0))
        per[r["store"]] = (c + 1, s + float(r["amount_eur"]))
    for store in sorted(per):
        totals.append((day, store, per[store][0], round(per[store][1], 2)))
        by_store[store] = by_store.get(store, 0.0) + per[store][1]
with open(totals_path, "w", newline="") as f:
    w = csv.writer(f)
    w.writerow(["date", "store", "orders", "revenue_eur"])
    w.writerows([d, s, n, f"{v:.2f}"] for d, s, n, v in totals)
report = {"days": len(files), "orders": sum(t[2] for t in totals),
          "revenue_eur": round(sum(by_store.values()), 2),
          "top_store": max(sorted(by_store), key=by_store.get) if by_store else None}
json.dump(report, open(report_path, "w"), indent=2)
PY
cat > Makefile <<'MK'
RAW   := $(sort $(wildcard raw/sales_*.csv))
CLEAN := $(patsubst raw/%,build/clean/%,$(RAW))

.PHONY: all clean
all: build/report.json

build/clean/%.csv: raw/%.csv rates.csv scripts/clean.py
	@mkdir -p build/clean
	python3 scripts/clean.py $< rates.csv $@

build/daily_totals.csv: $(CLEAN) scripts/aggregate.py
	python3 scripts/aggregate.py build/daily_totals.csv build/report.json $(CLEAN)

build/report.json: build/daily_totals.csv

clean:
	rm -rf build
MK
make
