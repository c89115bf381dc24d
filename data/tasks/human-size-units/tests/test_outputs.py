import importlib.util
import random
from decimal import Decimal, ROUND_HALF_UP

import pytest


def load():
    spec = importlib.util.spec_from_file_location("sizes", "/app/sizes.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_parse_valid():
    m = load()
    cases = {"0": 0, "42": 42, "42 B": 42, "1.5 B": 2, "0.1 KB": 100, "1k": 1000, "1 KiB": 1024, "  2.5mib ": 2621440,
             "3 GB": 3 * 10**9, "1.25 TiB": 1374389534720, "0.0001 kb": 0, "0.0005 KB": 1, "7 tb": 7 * 10**12, "10M": 10**7}
    for text, want in cases.items():
        assert m.parse_size(text) == want, text
    rng = random.Random(40)
    for _ in range(200):
        whole, frac = rng.randint(0, 5000), rng.randint(0, 999)
        unit, mult = rng.choice([("KB", 1000), ("MiB", 1024**2), ("gb", 1000**3), ("B", 1), ("kib", 1024)])
        text = "%d.%03d%s%s" % (whole, frac, rng.choice(["", " "]), unit)
        want = int((Decimal("%d.%03d" % (whole, frac)) * mult).quantize(Decimal(1), rounding=ROUND_HALF_UP))
        assert m.parse_size(text) == want, text


def test_parse_invalid():
    m = load()
    for bad in ["", "KB", "-1 KB", "1.2.3", "12 XB", "1,5 KB", "1 K B", ".5 KB", "5. KB", "abc"]:
        with pytest.raises(ValueError):
            m.parse_size(bad)


def ref_format(n, binary):
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


def test_format():
    m = load()
    fixed = {(999, False): "999 B", (1000, False): "1.0 KB", (1500, False): "1.5 KB", (1023, True): "1023 B",
             (1024, True): "1.0 KiB", (999999, False): "1.0 MB", (1048575, True): "1.0 MiB", (1250, False): "1.3 KB",
             (5 * 10**15, False): "5000.0 TB", (0, False): "0 B", (123456789, True): "117.7 MiB"}
    for (n, b), want in fixed.items():
        assert m.format_size(n, binary=b) == want, (n, b)
    rng = random.Random(41)
    for _ in range(300):
        n = rng.randint(0, 10 ** rng.randint(1, 15))
        b = rng.random() < 0.5
        assert m.format_size(n, binary=b) == ref_format(n, b), (n, b)
    with pytest.raises(ValueError):
        m.format_size(-1)
