#!/bin/bash
set -e
cat > /app/shipping/rates.py <<'PY'
"""Shipping price quotes (see the original docstring rules)."""
import math
from decimal import Decimal, ROUND_HALF_UP

ZONES = {"domestic": Decimal("1.0"), "eu": Decimal("1.6"), "world": Decimal("2.4")}


def base_price(weight_kg):
    if weight_kg <= 0:
        raise ValueError("weight must be positive")
    if weight_kg <= 1:
        return Decimal("4.90")
    if weight_kg <= 5:
        return Decimal("8.50")
    if weight_kg <= 20:
        return Decimal("15.00")
    extra = math.ceil(Decimal(str(weight_kg)) - 20)
    return Decimal("15.00") + Decimal("0.80") * extra


def quote(weight_kg, zone, express=False):
    mult = ZONES[zone.lower()]
    price = base_price(weight_kg) * mult
    if express:
        price = price * 2
    return price.quantize(Decimal("0.01"), rounding=ROUND_HALF_UP)
PY
sed -i 's/if d.weekday() < 6 and d not in holidays:/if d.weekday() < 5 and d not in holidays:/' /app/shipping/calendar.py
python3 - <<'PY'
p = "/app/shipping/codes.py"
s = open(p).read()
s = s.replace("    price = Decimal(str(price))\n", "    price = Decimal(str(price))\n    code = code.strip().upper()\n")
s = s.replace("out = price - 5", "out = max(price - 5, Decimal(0))")
open(p, "w").write(s)
PY
