#!/bin/bash
set -e
cat > /app/jsonpatch_lite.py <<'PY'
import copy
import json
import sys


class PatchError(Exception):
    pass


def _parts(pointer):
    if pointer == "":
        return []
    if not pointer.startswith("/"):
        raise PatchError("bad pointer %r" % pointer)
    return [p.replace("~1", "/").replace("~0", "~") for p in pointer[1:].split("/")]


def _index(token, n, allow_end=False):
    if token == "-" and allow_end:
        return n
    if not token.isdigit() or (len(token) > 1 and token[0] == "0"):
        raise PatchError("bad array index %r" % token)
    i = int(token)
    if i > n or (i == n and not allow_end):
        raise PatchError("index out of range %r" % token)
    return i


def _child(v, token):
    if isinstance(v, dict):
        if token not in v:
            raise PatchError("missing member %r" % token)
        return v[token]
    if isinstance(v, list):
        return v[_index(token, len(v))]
    raise PatchError("cannot descend into scalar")


def resolve(doc, pointer):
    v = doc
    for t in _parts(pointer):
        v = _child(v, t)
    return v


def _parent(doc, pointer):
    parts = _parts(pointer)
    if not parts:
        return None, None
    return resolve(doc, "".join("/" + p.replace("~", "~0").replace("/", "~1") for p in parts[:-1])), parts[-1]


def _eq(a, b):
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return a == b
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_eq(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_eq(x, y) for x, y in zip(a, b))
    return type(a) is type(b) and a == b


def _add(doc, path, value):
    parent, last = _parent(doc, path)
    if last is None:
        return value
    if isinstance(parent, dict):
        parent[last] = value
    elif isinstance(parent, list):
        parent.insert(_index(last, len(parent), allow_end=True), value)
    else:
        raise PatchError("cannot add to scalar")
    return doc


def _remove(doc, path):
    parent, last = _parent(doc, path)
    if last is None:
        raise PatchError("cannot remove the root")
    if isinstance(parent, dict):
        if last not in parent:
            raise PatchError("missing member %r" % last)
        return parent.pop(last)
    if isinstance(parent, list):
        return parent.pop(_index(last, len(parent)))
    raise PatchError("cannot remove from scalar")


def _need(op, *names):
    for n in names:
        if n not in op:
            raise PatchError("operation missing %r" % n)
    return [op[n] for n in names]


def apply(doc, patch):
    doc = copy.deepcopy(doc)
    for op in patch:
        if not isinstance(op, dict):
            raise PatchError("operation must be an object")
        kind, path = _need(op, "op", "path")
        if kind == "add":
            doc = _add(doc, path, copy.deepcopy(_need(op, "value")[0]))
        elif kind == "remove":
            _remove(doc, path)
        elif kind == "replace":
            value = copy.deepcopy(_need(op, "value")[0])
            resolve(doc, path)
            if path == "":
                doc = value
            else:
                _remove(doc, path)
                doc = _add(doc, path, value)
        elif kind in ("move", "copy"):
            frm = _need(op, "from")[0]
            value = copy.deepcopy(resolve(doc, frm))
            if kind == "move":
                if path != frm and path.startswith(frm + "/"):
                    raise PatchError("cannot move into own child")
                if path == frm:
                    continue
                _remove(doc, frm)
            doc = _add(doc, path, value)
        elif kind == "test":
            if not _eq(resolve(doc, path), _need(op, "value")[0]):
                raise PatchError("test failed at %r" % path)
        else:
            raise PatchError("unknown op %r" % kind)
    return doc


if __name__ == "__main__":
    d, p = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
    try:
        out = apply(d, p)
    except PatchError as e:
        print("error: %s" % e, file=sys.stderr)
        sys.exit(1)
    print(json.dumps(out, sort_keys=True))
PY
