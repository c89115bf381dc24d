#!/bin/bash
set -e
cat > /app/wordfreq.py <<'PY'
#!/usr/bin/env python3
import argparse, collections, json, re, sys

p = argparse.ArgumentParser()
p.add_argument("files", nargs="+")
p.add_argument("--top", type=int)
p.add_argument("--ignore-case", action="store_true")
p.add_argument("--min-length", type=int, default=1)
p.add_argument("--json", action="store_true")
a = p.parse_args()
c = collections.Counter()
for f in a.files:
    try:
        text = open(f, encoding="utf-8").read()
    except OSError as e:
        print("wordfreq: %s" % e, file=sys.stderr)
        sys.exit(2)
    for w in re.findall(r"[A-Za-z0-9_']+", text):
        if a.ignore_case:
            w = w.lower()
        if len(w) >= a.min_length:
            c[w] += 1
items = sorted(c.items(), key=lambda kv: (-kv[1], kv[0]))
if a.top is not None:
    items = items[: a.top]
if a.json:
    print(json.dumps([{"word": w, "count": n} for w, n in items]))
else:
    for w, n in items:
        print(n, w)
PY
