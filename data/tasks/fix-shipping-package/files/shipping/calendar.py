"""Delivery date estimates: business days only (Mon-Fri), skipping the given holidays."""
import datetime as dt


def delivery_date(ship_date, business_days, holidays=()):
    """Date on which a parcel shipped on ship_date arrives after `business_days` business days.

    Counting starts the day after ship_date; weekends and dates in `holidays` are not business days.
    business_days == 0 returns ship_date itself.
    """
    d = ship_date
    left = business_days
    while left > 0:
        d += dt.timedelta(days=1)
        if d.weekday() < 6 and d not in holidays:
            left -= 1
    return d
