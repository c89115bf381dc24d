#!/bin/bash
python3 - <<'PY'
import csv, json
rd = lambda p: list(csv.DictReader(open(p)))
country = {c["customer_id"]: c["country"] for c in rd("/app/customers.csv")}
price = {p["product_id"]: float(p["unit_price"]) for p in rd("/app/products.csv")}
rates = json.load(open("/app/rates.json"))
countries, per_customer, unmatched = {}, {}, []
for o in rd("/app/orders.csv"):
    if o["status"] != "paid":
        continue
    if o["customer_id"] not in country:
        unmatched.append(o["order_id"])
        continue
    usd = int(o["quantity"]) * price[o["product_id"]] * rates[o["currency"]]
    c = country[o["customer_id"]]
    d = countries.setdefault(c, {"orders": 0, "revenue_usd": 0.0})
    d["orders"] += 1
    d["revenue_usd"] += usd
    pc = per_customer.setdefault(c, {})
    pc[o["customer_id"]] = pc.get(o["customer_id"], 0.0) + usd
for c, d in countries.items():
    d["revenue_usd"] = round(d["revenue_usd"], 2)
    d["top_customer"] = max(per_customer[c], key=per_customer[c].get)
json.dump({"countries": countries, "unmatched_orders": sorted(unmatched)}, open("/app/report.json", "w"), indent=2)
PY
