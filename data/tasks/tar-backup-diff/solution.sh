#!/bin/bash
cat > /app/tardiff.py <<'PY'
import hashlib
import json
import sys
import tarfile


def clean(n):
    while n.startswith("./"):
        n = n[2:]
    return "" if n in ("", ".") else n.rstrip("/")


def load(path):
    out, links = {}, {}
    with tarfile.open(path) as tf:
        for m in tf.getmembers():
            n = clean(m.name)
            if not n:
                continue
            meta = (m.mode & 0o7777, (m.uid, m.gid))
            if m.isdir():
                out[n] = ["dir", None, *meta]
            elif m.issym():
                out[n] = ["symlink", m.linkname, *meta]
            elif m.islnk():
                out[n] = ["file", None, *meta]
                links[n] = clean(m.linkname)
            else:
                out[n] = ["file", hashlib.sha256(tf.extractfile(m).read()).hexdigest(), *meta]
    for n, t in links.items():
        out[n][1] = out[t][1]
    return out


a, b = load(sys.argv[1]), load(sys.argv[2])
changed = {}
for n in sorted(set(a) & set(b)):
    x, y, what = a[n], b[n], []
    if x[0] != y[0]:
        what.append("type")
    elif x[1] != y[1]:
        what.append("content" if x[0] == "file" else "target")
    if x[2] != y[2]:
        what.append("mode")
    if x[3] != y[3]:
        what.append("owner")
    if what:
        changed[n] = what
print(json.dumps({"added": sorted(set(b) - set(a)), "removed": sorted(set(a) - set(b)), "changed": changed}))
PY
