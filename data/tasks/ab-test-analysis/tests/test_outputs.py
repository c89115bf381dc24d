import json
import math
from pathlib import Path

EXPECTED = {'excluded_users': 31, 'A': {'users': 1182, 'conversions': 51, 'rate': 0.04314720812182741}, 'B': {'users': 1187, 'conversions': 79, 'rate': 0.06655433866891322}, 'z': 2.501301724186778, 'p_value': 0.012373770812158003, 'diff': 0.023407130547085812, 'ci_low': 0.005097852279568233, 'ci_high': 0.041716408814603395, 'srm_chi2': 0.010552975939214858, 'srm_p_value': 0.9181791055515421}


def load():
    return json.loads(Path("/app/ab_result.json").read_text())


def test_counts():
    got = load()
    assert got["excluded_users"] == EXPECTED["excluded_users"]
    for g in ("A", "B"):
        assert got[g]["users"] == EXPECTED[g]["users"], g
        assert got[g]["conversions"] == EXPECTED[g]["conversions"], g
        assert math.isclose(got[g]["rate"], EXPECTED[g]["rate"], abs_tol=1e-9), g


def test_z_test():
    got = load()
    for k in ("z", "p_value"):
        assert math.isclose(got[k], EXPECTED[k], rel_tol=1e-6, abs_tol=1e-12), (k, got[k], EXPECTED[k])


def test_difference_interval():
    got = load()
    for k in ("diff", "ci_low", "ci_high"):
        assert math.isclose(got[k], EXPECTED[k], rel_tol=1e-5, abs_tol=1e-7), (k, got[k], EXPECTED[k])


def test_sample_ratio_mismatch():
    got = load()
    for k in ("srm_chi2", "srm_p_value"):
        assert math.isclose(got[k], EXPECTED[k], rel_tol=1e-6, abs_tol=1e-12), (k, got[k], EXPECTED[k])
