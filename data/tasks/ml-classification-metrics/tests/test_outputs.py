import json
import math
import random
import subprocess
import tempfile
from pathlib import Path


def reference(yt, yp):
    labels = sorted(set(yt) | set(yp))
    cm = [[sum(1 for t, p in zip(yt, yp) if t == a and p == b) for b in labels] for a in labels]
    per = {}
    for i, l in enumerate(labels):
        tp, pred, sup = cm[i][i], sum(row[i] for row in cm), sum(cm[i])
        p = tp / pred if pred else 0.0
        r = tp / sup if sup else 0.0
        per[l] = {"precision": p, "recall": r, "f1": 2 * p * r / (p + r) if p + r else 0.0, "support": sup}
    return {"accuracy": sum(cm[i][i] for i in range(len(labels))) / len(yt), "labels": labels, "confusion": cm,
            "per_class": per, "macro_f1": sum(v["f1"] for v in per.values()) / len(labels),
            "weighted_f1": sum(v["f1"] * v["support"] for v in per.values()) / len(yt)}


def run(yt, yp):
    with tempfile.TemporaryDirectory() as d:
        f = Path(d, "preds.csv")
        f.write_text("y_true,y_pred\n" + "".join(f"{t},{p}\n" for t, p in zip(yt, yp)))
        out = subprocess.run(["python3", "/app/metrics.py", str(f)], capture_output=True, text=True, timeout=30)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)


def cases():
    rng = random.Random(2024)
    out = []
    for n, labs in ((60, ["ant", "bee", "cow"]), (250, ["c10", "c2", "c1", "x", "y"])):
        yt = [rng.choice(labs) for _ in range(n)]
        yp = [t if rng.random() < 0.6 else rng.choice(labs) for t in yt]
        out.append((yt, yp))
    # 'zeta' is predicted but never true, 'omega' is true but never predicted
    yt = ["alpha", "alpha", "beta", "omega", "omega", "beta", "alpha"]
    yp = ["alpha", "zeta", "beta", "alpha", "beta", "beta", "zeta"]
    out.append((yt, yp))
    return out


def close(a, b):
    return math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-12)


def test_confusion_and_accuracy():
    for yt, yp in cases():
        got, want = run(yt, yp), reference(yt, yp)
        assert got["labels"] == want["labels"]
        assert got["confusion"] == want["confusion"]
        assert close(got["accuracy"], want["accuracy"])


def test_per_class():
    for yt, yp in cases()[:2]:
        got, want = run(yt, yp), reference(yt, yp)
        assert set(got["per_class"]) == set(want["per_class"])
        for l, m in want["per_class"].items():
            g = got["per_class"][l]
            assert g["support"] == m["support"], l
            for k in ("precision", "recall", "f1"):
                assert close(g[k], m[k]), (l, k, g[k], m[k])


def test_averages_and_zero_division():
    for yt, yp in cases():
        got, want = run(yt, yp), reference(yt, yp)
        assert close(got["macro_f1"], want["macro_f1"]), (got["macro_f1"], want["macro_f1"])
        assert close(got["weighted_f1"], want["weighted_f1"])
    got = run(*cases()[2])
    assert got["per_class"]["zeta"] == {"precision": 0.0, "recall": 0.0, "f1": 0.0, "support": 0}
    assert got["per_class"]["omega"]["precision"] == 0.0 and got["per_class"]["omega"]["support"] == 2
