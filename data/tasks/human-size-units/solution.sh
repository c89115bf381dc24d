#!/bin/bash
set -e
cat > /app/sizes.py <<'PY'
import re
from decimal import Decimal, ROUND_HALF_UP

UNITS = {"": 1, "b": 1, "k": 1000, "kb": 1000, "m": 1000**2, "mb": 1000**2, "g": 1000**3, "gb": 1000**3,
         "t": 1000**4, "tb": 1000**4, "kib": 1024, "mib": 1024**2, "gib": 1024**3, "tib": 1024**4}


def parse_size(text):
    m = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([A-Za-z]*)\s*", text)
    if not m or m.group(2).lower() not in UNITS:
        raise ValueError("invalid size %r" % text)
    v = Decimal(m.group(1)) * UNITS[m.group(2).lower()]
    return int(v.quantize(Decimal(1), rounding=ROUND_HALF_UP))


def format_size(n, binary=False):
    if n < 0:
        raise ValueError("negative size")
    base = 1024 if binary else 1000
    names = ["KiB", "MiB", "GiB", "TiB"] if binary else ["KB", "MB", "GB", "TB"]
    if n < base:
        return "%d B" % n
    i = 0
    while i < 3 and n >= base ** (i + 2):
        i += 1
    while True:
        v = (Decimal(n) / Decimal(base ** (i + 1))).quantize(Decimal("0.1"), rounding=ROUND_HALF_UP)
        if v >= base and i < 3:
            i += 1
            continue
        return "%s %s" % (v, names[i])
PY
