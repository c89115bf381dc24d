"""Billing helpers. `calc_total` was renamed to `compute_total` in v2."""
from decimal import Decimal, ROUND_HALF_UP


def compute_total(lines, tax_rate):
    """lines: iterable of (quantity, unit_price_str); returns the total incl. tax as a 2-decimal string."""
    net = sum(Decimal(q) * Decimal(p) for q, p in lines)
    gross = net * (1 + Decimal(tax_rate))
    return str(gross.quantize(Decimal("0.01"), rounding=ROUND_HALF_UP))
