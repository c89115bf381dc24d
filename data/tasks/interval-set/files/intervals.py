"""Half-open integer interval sets, e.g. for booked time slots. Implement IntervalSet."""


class IntervalSet:
    pass
