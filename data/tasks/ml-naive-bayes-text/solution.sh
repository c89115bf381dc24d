#!/bin/bash
set -e
cat > /app/nb.py <<'PY'
import json
import math
import re
import sys
from collections import Counter


def tokens(text):
    return re.findall(r"[a-z0-9]+", text.lower())


def train(src, dst):
    docs = [json.loads(l) for l in open(src) if l.strip()]
    labels = sorted({d["label"] for d in docs})
    counts = {c: Counter() for c in labels}
    ndocs = Counter(d["label"] for d in docs)
    for d in docs:
        counts[d["label"]].update(tokens(d["text"]))
    vocab = set().union(*counts.values())
    model = {"prior": {c: math.log(ndocs[c] / len(docs)) for c in labels}, "loglik": {}, "unk": {}}
    for c in labels:
        denom = sum(counts[c].values()) + len(vocab)
        model["loglik"][c] = {w: math.log((counts[c][w] + 1) / denom) for w in vocab}
    json.dump(model, open(dst, "w"))


def predict(model_path, src, dst):
    m = json.load(open(model_path))
    labels = sorted(m["prior"])
    with open(dst, "w") as out:
        for line in open(src):
            if not line.strip():
                continue
            toks = [t for t in tokens(json.loads(line)["text"]) if t in m["loglik"][labels[0]]]
            scores = {c: m["prior"][c] + sum(m["loglik"][c][t] for t in toks) for c in labels}
            best = min((c for c in labels if scores[c] == max(scores.values())))
            out.write(json.dumps({"label": best, "scores": scores}) + "\n")


if __name__ == "__main__":
    if sys.argv[1] == "train":
        train(sys.argv[2], sys.argv[3])
    else:
        predict(sys.argv[2], sys.argv[3], sys.argv[4])
PY
python3 /app/nb.py train /app/data/train.jsonl /app/nb_model.json
