#!/bin/bash
set -e
cat > /app/bump <<'PY'
#!/usr/bin/env python3
import re, sys
NUM = r"(0|[1-9]\d*)"
PID = r"(?:0|[1-9]\d*|\d*[A-Za-z-][0-9A-Za-z-]*)"
RE = re.compile(rf"^{NUM}\.{NUM}\.{NUM}(?:-({PID}(?:\.{PID})*))?(?:\+([0-9A-Za-z-]+(?:\.[0-9A-Za-z-]+)*))?$")
def die(msg):
    print(f"bump: {msg}", file=sys.stderr); sys.exit(1)
if len(sys.argv) != 3:
    die("usage: bump VERSION LEVEL")
m = RE.match(sys.argv[1])
if not m:
    die("invalid version")
ma, mi, pa, pre = int(m[1]), int(m[2]), int(m[3]), m[4]
lvl = sys.argv[2]
if lvl == "major": print(f"{ma+1}.0.0")
elif lvl == "minor": print(f"{ma}.{mi+1}.0")
elif lvl == "patch": print(f"{ma}.{mi}.{pa+1}")
elif lvl == "pre":
    if pre is None:
        print(f"{ma}.{mi}.{pa+1}-rc.1")
    else:
        ids = pre.split(".")
        if ids[-1].isdigit():
            ids[-1] = str(int(ids[-1]) + 1)
        else:
            ids.append("1")
        print(f"{ma}.{mi}.{pa}-{'.'.join(ids)}")
else:
    die("unknown level")
PY
chmod +x /app/bump
