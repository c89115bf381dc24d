#!/bin/bash
set -e
cat > /app/buildorder <<'PY'
#!/usr/bin/env python3
import sys

def die(msg, code):
    print(msg, file=sys.stderr); sys.exit(code)

deps, logical, start, buf = {}, [], None, ""
for no, raw in enumerate(open(sys.argv[1]).read().split("\n"), 1):
    line = raw.split("#", 1)[0].rstrip("\r")
    if start is None:
        start = no
    if line.rstrip().endswith("\\"):
        buf += line.rstrip()[:-1] + " "
        continue
    buf += line
    if buf.strip():
        logical.append((start, buf))
    buf, start = "", None
if buf.strip():
    logical.append((start, buf))
for no, text in logical:
    if ":" not in text:
        die(f"error: line {no}", 2)
    t, rest = text.split(":", 1)
    t = t.strip()
    if not t or len(t.split()) != 1 or ":" in rest:
        die(f"error: line {no}", 2)
    deps.setdefault(t, set()).update(rest.split())
    for d in rest.split():
        deps.setdefault(d, set())
targets = sys.argv[2:]
if targets:
    for t in targets:
        if t not in deps:
            die(f"error: unknown target {t}", 2)
    keep, stack = set(), list(targets)
    while stack:
        x = stack.pop()
        if x not in keep:
            keep.add(x); stack += deps[x]
    deps = {k: v for k, v in deps.items() if k in keep}
level, done, levels = {}, set(), []
remaining = set(deps)
while remaining:
    ready = sorted(x for x in remaining if deps[x] <= done)
    if not ready:
        die("error: cycle: " + " ".join(sorted(remaining)), 1)
    levels.append(ready)
    done.update(ready)
    remaining -= set(ready)
print("\n".join(" ".join(l) for l in levels))
PY
chmod +x /app/buildorder
