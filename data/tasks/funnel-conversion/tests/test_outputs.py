import json
import math
from pathlib import Path

STEPS = ['view_product', 'add_to_cart', 'checkout', 'purchase']
COUNTS = [180, 121, 67, 36]


def load():
    data = json.loads(Path("/app/funnel.json").read_text())
    assert [s["event"] for s in data["steps"]] == STEPS
    return data["steps"]


def test_step_user_counts():
    assert [s["users"] for s in load()] == COUNTS


def test_conversion_rates():
    steps = load()
    assert [s["users"] for s in steps][:1] == COUNTS[:1]
    assert steps[0]["conversion"] == 1 or math.isclose(steps[0]["conversion"], 1.0)
    for k in range(1, len(STEPS)):
        want = round(COUNTS[k] / COUNTS[k - 1], 4)
        assert math.isclose(steps[k]["conversion"], want, abs_tol=1e-4), (k, steps[k], want)
