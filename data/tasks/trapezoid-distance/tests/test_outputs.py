import json
import math
from pathlib import Path

DISTANCE = 969.4409999999999
MEAN_VELOCITY = 16.157349999999997
PEAK_TIME = 60.0


def load():
    return json.loads(Path("/app/result.json").read_text())


def test_result_json():
    assert {"distance_m", "mean_velocity_m_s", "peak_time_s"} <= set(load())


def test_distance():
    assert math.isclose(float(load()["distance_m"]), DISTANCE, rel_tol=1e-6)


def test_mean_and_peak():
    r = load()
    assert math.isclose(float(r["mean_velocity_m_s"]), MEAN_VELOCITY, rel_tol=1e-6)
    assert math.isclose(float(r["peak_time_s"]), PEAK_TIME, abs_tol=1e-9)
