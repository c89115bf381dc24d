import json
import math
from pathlib import Path

EXPECTED = {'GET /api/orders/{id}/items': {'count': 188, 'p50': 58.5, 'p95': 187.3, 'p99': 250.5}, 'GET /api/users': {'count': 192, 'p50': 39.4, 'p95': 87.0, 'p99': 145.6}, 'GET /api/users/{id}': {'count': 173, 'p50': 63.4, 'p95': 179.0, 'p99': 300.3}, 'GET /health': {'count': 166, 'p50': 1.9, 'p95': 5.4, 'p99': 7.0}, 'POST /api/orders': {'count': 181, 'p50': 126.3, 'p95': 285.4, 'p99': 481.7}}


def load():
    return json.loads(Path("/app/latency.json").read_text())


def test_endpoints_and_counts():
    got = load()
    assert sorted(got) == sorted(EXPECTED)
    assert {k: v["count"] for k, v in got.items()} == {k: v["count"] for k, v in EXPECTED.items()}


def test_percentiles():
    got = load()
    assert sorted(got) == sorted(EXPECTED)
    for k, e in EXPECTED.items():
        for q in ("p50", "p95", "p99"):
            assert math.isclose(float(got[k][q]), e[q], abs_tol=1e-6), (k, q, got[k][q], e[q])
