#!/bin/bash
set -e
cat > /app/render.py <<'PY'
import json
import os
import re
import sys

REF = re.compile(r"\$\{([^}]+)\}")


def merge(base, over):
    out = dict(base)
    for k, v in over.items():
        if v is None:
            out.pop(k, None)
        elif isinstance(v, dict) and isinstance(out.get(k), dict):
            out[k] = merge(out[k], v)
        else:
            out[k] = v
    return out


def lookup(cfg, path):
    cur = cfg
    for part in path.split("."):
        if not isinstance(cur, dict) or part not in cur:
            raise KeyError(path)
        cur = cur[part]
    return cur


def text(v):
    if isinstance(v, bool):
        return "true" if v else "false"
    return str(v)


def resolve(cfg, value, depth=0):
    if depth > 20:
        raise RecursionError("reference loop")
    if isinstance(value, dict):
        return {k: resolve(cfg, v, depth) for k, v in value.items()}
    if isinstance(value, list):
        return [resolve(cfg, v, depth) for v in value]
    if isinstance(value, str):
        return REF.sub(lambda m: text(resolve(cfg, lookup(cfg, m.group(1)), depth + 1)), value)
    return value


def main(env):
    over = f"/app/config/overlays/{env}.json"
    if not os.path.exists(over):
        sys.exit(f"render: no overlay for environment {env!r} ({over})")
    cfg = merge(json.load(open("/app/config/base.json")), json.load(open(over)))
    try:
        cfg = resolve(cfg, cfg)
    except KeyError as e:
        sys.exit(f"render: unknown reference ${{{e.args[0]}}}")
    os.makedirs("/app/rendered", exist_ok=True)
    json.dump(cfg, open(f"/app/rendered/{env}.json", "w"), indent=2)


if __name__ == "__main__":
    main(sys.argv[1])
PY
for e in dev staging prod; do python3 /app/render.py $e; done
