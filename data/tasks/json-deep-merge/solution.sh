#!/bin/bash
set -e
cat > /app/jmerge <<'PY'
#!/usr/bin/env python3
import json, sys

def merge(a, b):
    if isinstance(a, dict) and isinstance(b, dict):
        out = dict(a)
        for k, v in b.items():
            if v is None:
                out.pop(k, None)
            else:
                out[k] = merge(a[k], v) if k in a else strip(v)
        return out
    return strip(b)

def strip(v):
    # nulls inside objects that are newly added are removed too (merge on top of nothing)
    if isinstance(v, dict):
        return {k: strip(x) for k, x in v.items() if x is not None}
    return v

result = None
for path in sys.argv[1:]:
    try:
        doc = json.load(open(path))
    except Exception as e:
        print(f"jmerge: {path}: {e}", file=sys.stderr); sys.exit(1)
    if not isinstance(doc, dict):
        print(f"jmerge: {path}: top level is not an object", file=sys.stderr); sys.exit(1)
    result = strip(doc) if result is None else merge(result, doc)
print(json.dumps(result, indent=2))
PY
chmod +x /app/jmerge
