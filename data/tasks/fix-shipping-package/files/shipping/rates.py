"""Shipping price quotes.

Price rules (all money in Decimal, result rounded to cents, half-up):
* base price by weight tier: weight_kg <= 1 -> 4.90, <= 5 -> 8.50, <= 20 -> 15.00, above 20 -> 15.00 + 0.80 per
  started kg above 20 (20.1 kg -> 1 extra kg, 21 kg -> 1, 21.01 kg -> 2).
* zone multiplier: "domestic" 1.0, "eu" 1.6, "world" 2.4 (zone names are case-insensitive).
* express doubles the price after the zone multiplier.
"""
import math
from decimal import Decimal, ROUND_HALF_UP

ZONES = {"domestic": Decimal("1.0"), "eu": Decimal("1.6"), "world": Decimal("2.4")}


def base_price(weight_kg):
    if weight_kg <= 0:
        raise ValueError("weight must be positive")
    if weight_kg < 1:
        return Decimal("4.90")
    if weight_kg < 5:
        return Decimal("8.50")
    if weight_kg <= 20:
        return Decimal("15.00")
    extra = math.floor(weight_kg - 20)
    return Decimal("15.00") + Decimal("0.80") * extra


def quote(weight_kg, zone, express=False):
    mult = ZONES[zone]
    price = base_price(weight_kg) * mult
    if express:
        price = price * 2
    return float(round(price, 2))
