#!/bin/bash
set -e
python3 - <<'PY'
import csv
import re

LB = 0.45359237
TO_KG = {"kg": 1.0, "g": 0.001, "lb": LB, "oz": LB / 16}


def kg(text):
    parts = re.findall(r"(\d+(?:\.\d+)?)\s*(kg|g|lb|oz)\b", text)
    return sum(float(v) * TO_KG[u] for v, u in parts)


def cm3(text):
    m = re.fullmatch(r"\s*([\d.]+)\s*x\s*([\d.]+)\s*x\s*([\d.]+)\s*(cm|in)\s*", text)
    f = 2.54 if m.group(4) == "in" else 1.0
    return float(m.group(1)) * f * float(m.group(2)) * f * float(m.group(3)) * f


with open("/app/parcels_metric.csv", "w", newline="") as out:
    w = csv.writer(out)
    w.writerow(["parcel_id", "weight_kg", "volume_l", "billable_kg"])
    for r in csv.DictReader(open("/app/parcels.csv")):
        weight, vol = kg(r["weight"]), cm3(r["dimensions"])
        w.writerow([r["parcel_id"], f"{weight:.3f}", f"{vol / 1000:.2f}", f"{max(weight, vol / 5000):.3f}"])
PY
