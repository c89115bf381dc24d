#!/bin/bash
cat > /app/ttt.py <<'PY'
import sys

b = [l.strip() for l in open(sys.argv[1]) if l.strip()]
lines = [b[i] for i in range(3)] + ["".join(b[r][c] for r in range(3)) for c in range(3)]
lines += ["".join(b[i][i] for i in range(3)), "".join(b[i][2 - i] for i in range(3))]
for p in "XO":
    if p * 3 in lines:
        print(p)
        break
else:
    print("draw" if all("." not in r for r in b) else "ongoing")
PY
