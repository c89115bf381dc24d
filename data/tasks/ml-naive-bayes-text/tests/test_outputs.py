import json
import math
import re
import shutil
import subprocess
import tempfile
from collections import Counter
from pathlib import Path

import sys

sys.path.insert(0, str(Path(__file__).parent))
import gen_data  # noqa: E402  (the data generator used to build the image, copied next to this file)


def gen():
    return gen_data


def tokens(text):
    return re.findall(r"[a-z0-9]+", text.lower())


def reference(train_docs, docs):
    labels = sorted({d["label"] for d in train_docs})
    counts = {c: Counter() for c in labels}
    nd = Counter(d["label"] for d in train_docs)
    for d in train_docs:
        counts[d["label"]].update(tokens(d["text"]))
    vocab = set().union(*counts.values())
    out = []
    for d in docs:
        toks = [t for t in tokens(d["text"]) if t in vocab]
        s = {}
        for c in labels:
            denom = sum(counts[c].values()) + len(vocab)
            s[c] = math.log(nd[c] / len(train_docs)) + sum(math.log((counts[c][t] + 1) / denom) for t in toks)
        best = min(c for c in labels if s[c] == max(s.values()))
        out.append({"label": best, "scores": s})
    return out


def run(train_docs, docs, tmp, delete_train=False):
    tmp = Path(tmp)
    (tmp / "train.jsonl").write_text("".join(json.dumps(d) + "\n" for d in train_docs))
    (tmp / "in.jsonl").write_text("".join(json.dumps({"text": d["text"]}) + "\n" for d in docs))
    r = subprocess.run(["python3", "/app/nb.py", "train", str(tmp / "train.jsonl"), str(tmp / "model.json")],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    if delete_train:
        (tmp / "train.jsonl").unlink()
        shutil.move(str(tmp / "model.json"), str(tmp / "moved_model.json"))
    model = tmp / ("moved_model.json" if delete_train else "model.json")
    r = subprocess.run(["python3", "/app/nb.py", "predict", str(model), str(tmp / "in.jsonl"), str(tmp / "out.jsonl")],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    return [json.loads(l) for l in (tmp / "out.jsonl").read_text().splitlines() if l.strip()]


def test_scores_exact():
    g = gen()
    train_docs, docs = g.make(5, 250), g.make(6, 60)
    with tempfile.TemporaryDirectory() as d:
        got = run(train_docs, docs, d)
    want = reference(train_docs, docs)
    assert len(got) == len(want)
    for a, b in zip(got, want):
        assert set(a["scores"]) == set(b["scores"])
        for c in b["scores"]:
            assert math.isclose(a["scores"][c], b["scores"][c], rel_tol=1e-9, abs_tol=1e-9), (a, b)


def test_predictions_match_reference():
    g = gen()
    train_docs = g.make(7, 500, (0.2, 0.3, 0.5))
    docs = g.make(8, 300) + [{"text": "zzz qqq", "label": "x"}, {"text": "", "label": "x"}]
    with tempfile.TemporaryDirectory() as d:
        got = run(train_docs, docs, d)
    want = reference(train_docs, docs)
    assert [a["label"] for a in got] == [b["label"] for b in want]
    acc = sum(a["label"] == d["label"] for a, d in zip(got[:300], docs)) / 300
    assert acc >= 0.85, acc


def test_model_file_is_used():
    g = gen()
    # a label set with equal priors and a tie: both labels see the same tokens equally often
    train_docs = [{"text": "alpha beta", "label": "zeta"}, {"text": "beta alpha", "label": "eta"}] + g.make(9, 100)
    docs = [{"text": "alpha BETA", "label": "?"}] + g.make(10, 50)
    with tempfile.TemporaryDirectory() as d:
        got = run(train_docs, docs, d, delete_train=True)
    want = reference(train_docs, docs)
    assert [a["label"] for a in got] == [b["label"] for b in want]
    assert set(got[0]["scores"]) == {"eta", "zeta", "food", "sports", "tech"}
