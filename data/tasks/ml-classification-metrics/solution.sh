#!/bin/bash
set -e
cat > /app/metrics.py <<'PY'
import csv
import json
import sys

rows = list(csv.DictReader(open(sys.argv[1], newline="")))
yt = [r["y_true"] for r in rows]
yp = [r["y_pred"] for r in rows]
labels = sorted(set(yt) | set(yp))
ix = {l: i for i, l in enumerate(labels)}
cm = [[0] * len(labels) for _ in labels]
for t, p in zip(yt, yp):
    cm[ix[t]][ix[p]] += 1
per = {}
for l, i in ix.items():
    tp = cm[i][i]
    pred = sum(cm[r][i] for r in range(len(labels)))
    sup = sum(cm[i])
    p = tp / pred if pred else 0.0
    r = tp / sup if sup else 0.0
    f = 2 * p * r / (p + r) if p + r else 0.0
    per[l] = {"precision": p, "recall": r, "f1": f, "support": sup}
n = len(yt)
print(json.dumps({
    "accuracy": sum(cm[i][i] for i in range(len(labels))) / n,
    "labels": labels, "confusion": cm, "per_class": per,
    "macro_f1": sum(v["f1"] for v in per.values()) / len(labels),
    "weighted_f1": sum(v["f1"] * v["support"] for v in per.values()) / n,
}))
PY
