#!/bin/bash
set -e
cat > /app/dotted.py <<'PY'
"""Convert between nested dicts and flat dicts with dotted keys."""


def flatten(data, sep="."):
    out = {}

    def walk(v, prefix):
        if isinstance(v, dict) and v:
            items = v.items()
        elif isinstance(v, list) and v:
            items = ((str(i), x) for i, x in enumerate(v))
        else:
            out[prefix] = v
            return
        for k, x in items:
            walk(x, k if prefix is None else prefix + sep + k)

    for k, v in data.items():
        walk(v, k)
    return out


def unflatten(flat, sep="."):
    root = {}
    leaf = object()
    for key, value in flat.items():
        parts = key.split(sep)
        node = root
        for p in parts[:-1]:
            nxt = node.setdefault(p, {})
            if not isinstance(nxt, dict) or nxt.get(leaf):
                raise ValueError("conflicting key %r" % key)
            node = nxt
        last = parts[-1]
        if last in node:
            raise ValueError("conflicting key %r" % key)
        node[last] = _Leaf(value)

    def build(n):
        if isinstance(n, _Leaf):
            return n.v
        d = {k: build(v) for k, v in n.items()}
        if d and all(k.isdigit() for k in d) and sorted(int(k) for k in d) == list(range(len(d))) \
                and all(str(int(k)) == k for k in d):
            return [d[str(i)] for i in range(len(d))]
        return d
    return build(root)


class _Leaf:
    def __init__(self, v):
        self.v = v
PY
