#!/bin/bash
set -e
cat > /app/gen <<'PY'
#!/usr/bin/env python3
import os, re, sys

outdir, spec = sys.argv[1], sys.argv[2]
lines = open(spec).read().split("\n")
if lines and lines[-1] == "":
    lines.pop()


def fail(n, msg):
    print(f"error: line {n}: {msg}", file=sys.stderr)
    sys.exit(1)


enums, cur = [], None
for n, raw in enumerate(lines, 1):
    s = raw.split("#", 1)[0].strip()
    if not s:
        continue
    m = re.fullmatch(r"enum\s+([A-Z][A-Za-z0-9]*)", s)
    if m:
        if cur is not None:
            fail(n, "nested enum")
        if any(e[0] == m[1] for e in enums):
            fail(n, "duplicate enum")
        cur = (m[1], [])
        continue
    if s == "end":
        if cur is None:
            fail(n, "end outside enum")
        if not cur[1]:
            fail(n, "empty enum")
        enums.append(cur)
        cur = None
        continue
    m = re.fullmatch(r"([A-Z][A-Z0-9_]*)(?:\s*=\s*(-?[0-9]+))?", s)
    if not m or cur is None:
        fail(n, "bad line")
    members = cur[1]
    if m[2] is not None:
        v = int(m[2])
    else:
        v = members[-1][1] + 1 if members else 0
    if not -2**31 <= v < 2**31:
        fail(n, "value out of range")
    if any(x[0] == m[1] for x in members) or any(x[1] == v for x in members):
        fail(n, "duplicate member or value")
    members.append((m[1], v))
if cur is not None:
    fail(len(lines), "missing end")

h = ["#ifndef GENERATED_ENUMS_H", "#define GENERATED_ENUMS_H", ""]
c = ['#include <stddef.h>', '#include <string.h>', '#include "enums.h"', ""]
for name, members in enums:
    p = name.upper()
    h.append("typedef enum { " + ", ".join(f"{p}_{m} = {v}" for m, v in members) + f" }} {name};")
    h.append(f"#define {p}_COUNT {len(members)}")
    h.append(f"const char *{name}_name({name} v);")
    h.append(f"int {name}_parse(const char *s, {name} *out);")
    h.append("")
    c.append(f"const char *{name}_name({name} v) {{\n    switch ((int)v) {{")
    c += [f'    case {v}: return "{m}";' for m, v in members]
    c.append("    default: return NULL;\n    }\n}\n")
    c.append(f"int {name}_parse(const char *s, {name} *out) {{")
    c += [f'    if (strcmp(s, "{m}") == 0) {{ *out = {p}_{m}; return 1; }}' for m, v in members]
    c.append("    return 0;\n}\n")
h.append("#endif")
os.makedirs(outdir, exist_ok=True)
open(os.path.join(outdir, "enums.h"), "w").write("\n".join(h) + "\n")
open(os.path.join(outdir, "enums.c"), "w").write("\n".join(c) + "\n")
PY
chmod +x /app/gen
