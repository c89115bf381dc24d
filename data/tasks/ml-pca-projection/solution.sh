#!/bin/bash
set -e
cd /app
python3 - <<'PY'
import json
import numpy as np
X = np.loadtxt("data/features.csv", delimiter=",", skiprows=1)
Xc = X - X.mean(0)
_, s, Vt = np.linalg.svd(Xc, full_matrices=False)
comps = Vt[:2].copy()
for c in comps:
    if c[np.abs(c).argmax()] < 0:
        c *= -1
ev = s ** 2
json.dump({"components": comps.tolist(), "explained_variance_ratio": (ev[:2] / ev.sum()).tolist()}, open("pca.json", "w"))
P = Xc @ comps.T
open("projected.csv", "w").write("pc1,pc2\n" + "".join(f"{a!r},{b!r}\n" for a, b in P))
PY
