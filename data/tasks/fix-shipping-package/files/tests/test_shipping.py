import datetime as dt
import sys
from decimal import Decimal

sys.path.insert(0, __file__.rsplit("/tests/", 1)[0])
from shipping import apply_code, delivery_date, quote  # noqa: E402


def test_tiers():
    assert quote(1, "domestic") == Decimal("4.90")
    assert quote(5, "domestic") == Decimal("8.50")
    assert quote(20.1, "domestic") == Decimal("15.80")
    assert quote(21, "domestic") == Decimal("15.80")
    assert quote(21.01, "domestic") == Decimal("16.60")


def test_zones_and_express():
    assert quote(2, "EU") == Decimal("13.60")
    assert quote(0.5, "world", express=True) == Decimal("23.52")
    assert quote(0.3, "eu") == Decimal("7.84")


def test_rounding_half_up():
    assert quote(22.5, "eu") == Decimal("27.84")
    assert isinstance(quote(3, "domestic"), Decimal)


def test_delivery_skips_weekend_and_holidays():
    fri = dt.date(2024, 3, 1)
    assert delivery_date(fri, 1) == dt.date(2024, 3, 4)
    assert delivery_date(fri, 0) == fri
    assert delivery_date(dt.date(2024, 3, 4), 3, holidays={dt.date(2024, 3, 5)}) == dt.date(2024, 3, 8)


def test_codes():
    assert apply_code(Decimal("19.99"), " save10 ") == Decimal("17.99")
    assert apply_code(Decimal("3.00"), "flat5") == Decimal("0.00")
    assert apply_code(Decimal("12.00"), "FreeShip") == Decimal("0.00")
