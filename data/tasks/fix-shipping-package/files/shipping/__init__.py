from .rates import quote
from .calendar import delivery_date
from .codes import apply_code

__all__ = ["quote", "delivery_date", "apply_code"]
