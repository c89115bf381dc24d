import json
import math
from pathlib import Path

EXPECTED = {
    "countries": {
        "DE": {
            "orders": 32,
            "revenue_usd": 10130.9,
            "top_customer": "C013"
        },
        "FR": {
            "orders": 39,
            "revenue_usd": 11207.45,
            "top_customer": "C010"
        },
        "GB": {
            "orders": 24,
            "revenue_usd": 5847.43,
            "top_customer": "C018"
        },
        "JP": {
            "orders": 16,
            "revenue_usd": 4101.72,
            "top_customer": "C009"
        }
    },
    "unmatched_orders": [
        "O0007",
        "O0011",
        "O0041",
        "O0056",
        "O0060",
        "O0069",
        "O0073",
        "O0079",
        "O0101",
        "O0105",
        "O0120",
        "O0135"
    ]
}


def load():
    return json.loads(Path("/app/report.json").read_text())


def test_countries_and_order_counts():
    got = load()["countries"]
    assert {c: int(v["orders"]) for c, v in got.items()} == {c: v["orders"] for c, v in EXPECTED["countries"].items()}


def test_revenue():
    got = load()["countries"]
    assert sorted(got) == sorted(EXPECTED["countries"])
    for c, v in EXPECTED["countries"].items():
        assert math.isclose(float(got[c]["revenue_usd"]), v["revenue_usd"], abs_tol=0.011), c


def test_top_customers():
    got = load()["countries"]
    assert {c: v["top_customer"] for c, v in got.items()} == {c: v["top_customer"] for c, v in EXPECTED["countries"].items()}


def test_unmatched_orders():
    assert load()["unmatched_orders"] == EXPECTED["unmatched_orders"]
