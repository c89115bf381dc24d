#!/bin/bash
set -e
cat > /app/mergepatch.py <<'PY'
import copy
import json
import sys


def apply_patch(target, patch):
    if not isinstance(patch, dict):
        return copy.deepcopy(patch)
    result = copy.deepcopy(target) if isinstance(target, dict) else {}
    for k, v in patch.items():
        if v is None:
            result.pop(k, None)
        else:
            result[k] = apply_patch(result.get(k), v)
    return result


def make_patch(source, target):
    if not isinstance(source, dict) or not isinstance(target, dict):
        return copy.deepcopy(target)
    p = {}
    for k in source:
        if k not in target:
            p[k] = None
    for k, v in target.items():
        if k not in source:
            p[k] = copy.deepcopy(v)
        elif source[k] != v or type(source[k]) is not type(v):
            p[k] = make_patch(source[k], v)
    return p


if __name__ == "__main__":
    cmd, a, b = sys.argv[1:4]
    x, y = json.load(open(a)), json.load(open(b))
    out = apply_patch(x, y) if cmd == "apply" else make_patch(x, y)
    print(json.dumps(out, sort_keys=True))
PY
