import datetime as dt
import hashlib
import importlib
import math
import random
import subprocess
import sys
from decimal import Decimal, ROUND_HALF_UP

import pytest

sys.path.insert(0, "/app")


def pkg():
    for k in list(sys.modules):
        if k == "shipping" or k.startswith("shipping."):
            del sys.modules[k]
    return importlib.import_module("shipping")


def ref_quote(w, zone, express):
    wd = Decimal(str(w))
    if wd <= 1:
        b = Decimal("4.90")
    elif wd <= 5:
        b = Decimal("8.50")
    elif wd <= 20:
        b = Decimal("15.00")
    else:
        b = Decimal("15.00") + Decimal("0.80") * math.ceil(wd - 20)
    p = b * {"domestic": Decimal("1.0"), "eu": Decimal("1.6"), "world": Decimal("2.4")}[zone.lower()]
    if express:
        p *= 2
    return p.quantize(Decimal("0.01"), rounding=ROUND_HALF_UP)


def test_quote_hidden_cases():
    s = pkg()
    rng = random.Random(50)
    ws = [0.2, 1, 1.01, 5, 5.5, 20, 20.01, 21, 21.5, 33] + [round(rng.uniform(0.1, 60), 2) for _ in range(200)]
    for w in ws:
        zone = rng.choice(["domestic", "EU", "World", "eu"])
        ex = rng.random() < 0.4
        got = s.quote(w, zone, express=ex)
        assert isinstance(got, Decimal) and got == ref_quote(w, zone, ex), (w, zone, ex)
    with pytest.raises(ValueError):
        s.quote(0, "eu")


def ref_delivery(d, n, hol):
    while n > 0:
        d += dt.timedelta(days=1)
        if d.weekday() < 5 and d not in hol:
            n -= 1
    return d


def test_delivery_hidden_cases():
    s = pkg()
    rng = random.Random(51)
    for _ in range(200):
        start = dt.date(2025, 1, 1) + dt.timedelta(days=rng.randint(0, 400))
        hol = {start + dt.timedelta(days=rng.randint(1, 20)) for _ in range(rng.randint(0, 4))}
        n = rng.randint(0, 12)
        assert s.delivery_date(start, n, holidays=hol) == ref_delivery(start, n, hol)
    sat = dt.date(2025, 6, 7)
    assert s.delivery_date(sat, 1) == dt.date(2025, 6, 9)


def test_codes_hidden_cases():
    s = pkg()
    rng = random.Random(52)
    for _ in range(100):
        price = Decimal("%d.%02d" % (rng.randint(0, 40), rng.randint(0, 99)))
        code = rng.choice(["SAVE10", "save10", " Flat5", "FLAT5 ", "freeship"])
        c = code.strip().upper()
        want = {"SAVE10": price * Decimal("0.9"), "FLAT5": max(price - 5, Decimal(0)), "FREESHIP": Decimal(0)}[c]
        assert s.apply_code(price, code) == want.quantize(Decimal("0.01"), rounding=ROUND_HALF_UP)
    with pytest.raises(KeyError):
        s.apply_code(Decimal(1), "BOGUS")


def test_package_suite_passes():
    with open("/app/tests/test_shipping.py", "rb") as f:  # the package's tests must not be edited
        assert hashlib.sha256(f.read()).hexdigest() == "64f28753be774424bc14e37ecbc2fa2a42d117f6cb0b41cf68781167303bdbf7"
    r = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests"], cwd="/app",
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stdout[-2000:]
    assert "5 passed" in r.stdout
