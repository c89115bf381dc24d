#!/bin/bash
set -e
cd /app
python3 - <<'PY'
import numpy as np
z = np.load("model.npz")
lines = [f"{k} {'x'.join(map(str, z[k].shape))} {z[k].size}" for k in sorted(z.files)]
lines.append(f"total {sum(z[k].size for k in z.files)}")
open("params.txt", "w").write("\n".join(lines) + "\n")
PY
