#!/bin/bash
cat > /app/sources2deb822.py <<'PY'
import sys

NAMES = [("arch", "Architectures"), ("lang", "Languages"), ("target", "Targets"), ("trusted", "Trusted"),
         ("signed-by", "Signed-By")]
sources = {}
for raw in open(sys.argv[1]):
    line = raw.split("#", 1)[0].strip()
    if not line:
        continue
    typ, rest = line.split(None, 1)
    opts = {}
    rest = rest.strip()
    if rest.startswith("["):
        inner, rest = rest[1:].split("]", 1)
        opts = dict(kv.split("=", 1) for kv in inner.split())
    uri, suite, *comps = rest.split()
    key = (uri, suite, tuple(comps), frozenset(opts.items()))
    sources.setdefault(key, set()).add(typ)
stanzas = {}
for (uri, suite, comps, opts), types in sources.items():
    k = (tuple(t for t in ("deb", "deb-src") if t in types), uri, comps, opts)
    if suite not in stanzas.setdefault(k, []):
        stanzas[k].append(suite)
blocks = []
for (types, uri, comps, opts), suites in stanzas.items():
    lines = [f"Types: {' '.join(types)}", f"URIs: {uri}", f"Suites: {' '.join(suites)}"]
    if comps:
        lines.append(f"Components: {' '.join(comps)}")
    o = dict(opts)
    lines += [f"{name}: {' '.join(o[k].split(','))}" for k, name in NAMES if k in o]
    blocks.append("\n".join(lines) + "\n")
sys.stdout.write("\n".join(blocks))
PY
