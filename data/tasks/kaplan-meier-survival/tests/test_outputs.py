import json
import math
from pathlib import Path

EXPECTED = {'control': {'times': [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 12, 13, 14, 18, 19, 23, 32, 36], 'at_risk': [45, 37, 35, 29, 27, 25, 22, 19, 17, 14, 12, 11, 10, 7, 5, 3, 2, 1], 'events': [8, 2, 6, 2, 1, 2, 3, 2, 3, 2, 1, 1, 1, 1, 2, 1, 1, 1], 'survival': [0.8222222222222222, 0.7777777777777778, 0.6444444444444444, 0.5999999999999999, 0.5777777777777777, 0.5315555555555556, 0.4590707070707071, 0.41074747474747475, 0.33826262626262626, 0.28993939393939394, 0.2657777777777778, 0.24161616161616162, 0.21745454545454546, 0.1863896103896104, 0.11183376623376624, 0.07455584415584417, 0.037277922077922084, 0.0], 'median': 7}, 'treatment': {'times': [1, 2, 3, 4, 5, 6, 7, 8, 10, 12, 13, 14, 17, 22, 26, 28], 'at_risk': [45, 42, 41, 38, 36, 31, 27, 24, 22, 20, 17, 15, 13, 9, 5, 2], 'events': [3, 1, 3, 2, 3, 3, 3, 1, 1, 2, 2, 1, 1, 1, 2, 1], 'survival': [0.9333333333333333, 0.9111111111111111, 0.8444444444444444, 0.8, 0.7333333333333334, 0.6623655913978495, 0.5887694145758662, 0.5642373556352052, 0.5385902031063322, 0.484731182795699, 0.4277039848197344, 0.3991903858317521, 0.3684834330754635, 0.32754082940041196, 0.19652449764024718, 0.09826224882012359], 'median': 12}}


def load():
    got = json.loads(Path("/app/km.json").read_text())
    assert sorted(got) == ["control", "treatment"]
    return got


def test_risk_table():
    got = load()
    for arm, want in EXPECTED.items():
        assert [int(t) for t in got[arm]["times"]] == want["times"], arm
        assert got[arm]["at_risk"] == want["at_risk"], arm
        assert got[arm]["events"] == want["events"], arm


def test_survival_curve():
    got = load()
    for arm, want in EXPECTED.items():
        assert len(got[arm]["survival"]) == len(want["survival"]), arm
        for a, b in zip(got[arm]["survival"], want["survival"]):
            assert math.isclose(a, b, abs_tol=1e-6), arm


def test_median_survival():
    got = load()
    for arm, want in EXPECTED.items():
        assert got[arm]["median"] == want["median"], arm
