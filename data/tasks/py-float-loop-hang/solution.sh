#!/bin/bash
set -e
python3 - <<'PY'
p = "/app/ticks.py"
s = open(p).read()
old = s[s.index("    ticks = []"):s.index("    return ticks")]
s = s.replace(old, "    n = round((stop - start) / step)\n    ticks = [start + i * step for i in range(n)]\n")
open(p, "w").write(s)
PY
