#!/bin/bash
set -e
cd /app
python3 - <<'PY'
import csv, json
import numpy as np
rows = list(csv.DictReader(open("train.csv")))
feats = [c for c in rows[0] if c != "label"]
X = np.array([[float(r[c]) for c in feats] for r in rows])
json.dump({"mean": dict(zip(feats, X.mean(0).tolist())), "std": dict(zip(feats, X.std(0).tolist()))},
          open("scaler.json", "w"), indent=1)
PY
