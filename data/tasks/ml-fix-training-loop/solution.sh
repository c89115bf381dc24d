#!/bin/bash
set -e
cd /app
python3 - <<'PY'
p = "/app/train.py"
s = open(p).read()
s = s.replace("        Xtr = Xtr[perm]\n", "        Xtr, ytr = Xtr[perm], ytr[perm]\n")
s = s.replace("w += LR * grad_w", "w -= LR * grad_w")
s = s.replace("best = (val, w, b, epoch)", "best = (val, w.copy(), b, epoch)\n            bad_epochs = 0")
s = s.replace("if bad_epochs > PATIENCE:", "if bad_epochs >= PATIENCE:")
open(p, "w").write(s)
PY
python3 /app/train.py
