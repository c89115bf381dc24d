#!/bin/bash
set -e
cd /app
python3 - <<'PY'
import numpy as np
words, vecs = [], []
for line in open("embeddings.txt"):
    p = line.split()
    words.append(p[0]); vecs.append([float(x) for x in p[1:]])
V = np.array(vecs)
V = V / np.linalg.norm(V, axis=1, keepdims=True)
q = words.index("paris")
sims = V @ V[q]
idx = [i for i in np.argsort(-sims) if i != q][:5]
open("neighbours.txt", "w").write("".join(f"{words[i]} {sims[i]:.3f}\n" for i in idx))
PY
