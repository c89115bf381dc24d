import json
import math
from pathlib import Path

# exact least-squares solution (computed with rational arithmetic)
EXPECTED = {"a": 0.73573984498855, "b": -2.5167736415121373, "c": 4.6392781234708265, "r2": 0.9717012933563534}


def fit():
    return json.loads(Path("/app/fit.json").read_text())


def test_fit_json_keys():
    assert {"a", "b", "c", "r2"} <= set(fit())


def test_coefficients():
    f = fit()
    for k in ("a", "b", "c"):
        assert math.isclose(float(f[k]), EXPECTED[k], rel_tol=1e-6), (k, f[k], EXPECTED[k])


def test_r_squared():
    assert math.isclose(float(fit()["r2"]), EXPECTED["r2"], rel_tol=1e-6)
