"""Discount codes: "SAVE10" = 10 % off, "FLAT5" = 5.00 off (never below 0), "FREESHIP" = price becomes 0.
Codes are case-insensitive and surrounding whitespace is ignored; unknown codes raise KeyError.
Results are Decimal rounded to cents, half-up.
"""
from decimal import Decimal, ROUND_HALF_UP


def apply_code(price, code):
    price = Decimal(str(price))
    if code == "SAVE10":
        out = price * Decimal("0.9")
    elif code == "FLAT5":
        out = price - 5
    elif code == "FREESHIP":
        out = Decimal(0)
    else:
        raise KeyError(code)
    return out.quantize(Decimal("0.01"), rounding=ROUND_HALF_UP)
