import random
from pathlib import Path


def expected():
    rng = random.Random(7)
    names = ["cat", "dog", "bird", "fish", "horse"]
    out = []
    for _ in range(200):
        row = [float(f"{rng.gauss(0, 2):.4f}") for _ in names]
        out.append(names[row.index(max(row))])
    return out


def test_predictions():
    got = Path("/app/predictions.txt").read_text().split()
    want = expected()
    assert len(got) == 200, len(got)
    wrong = [i for i in range(200) if got[i] != want[i]]
    assert not wrong, f"rows {wrong[:10]} wrong"
