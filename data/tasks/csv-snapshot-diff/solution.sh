#!/bin/bash
set -e
python3 - <<'PY'
import csv
import json


def load(path):
    return {r["sku"].strip(): {k: v.strip() for k, v in r.items()} for r in csv.DictReader(open(path, newline=""))}


old, new = load("/app/products_old.csv"), load("/app/products_new.csv")
changed = {}
for sku in sorted(old.keys() & new.keys()):
    for f in ("name", "price", "stock", "supplier"):
        a, b = old[sku][f], new[sku][f]
        same = float(a) == float(b) if f == "price" else a == b
        if not same:
            changed.setdefault(sku, {})[f] = [a, b]
json.dump({"added": sorted(new.keys() - old.keys()), "removed": sorted(old.keys() - new.keys()),
           "changed": changed}, open("/app/diff.json", "w"), indent=2)
PY
