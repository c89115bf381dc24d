#!/bin/bash
set -e
cat > /app/env2json <<'PY'
#!/usr/bin/env python3
import json, re, sys

NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def expand(s, env):
    out, i = [], 0
    while i < len(s):
        c = s[i]
        if c == "$":
            if s.startswith("${", i):
                j = s.find("}", i)
                if j > 0 and NAME.fullmatch(s[i + 2:j]):
                    out.append(env.get(s[i + 2:j], "")); i = j + 1; continue
            m = re.compile(r"[A-Za-z0-9_]+").match(s, i + 1)
            if m:
                out.append(env.get(m.group(), "")); i = m.end(); continue
        out.append(c); i += 1
    return "".join(out)


def rest_ok(rest):
    rest = rest.lstrip(" \t")
    return rest == "" or (rest.startswith("#") and True)


def parse_line(line, env):
    s = line.strip()
    if not s or s.startswith("#"):
        return None
    if s.startswith("export "):
        s = s[7:].lstrip()
    m = NAME.match(s)
    if not m:
        raise ValueError
    name, rest = m.group(), s[m.end():].lstrip(" \t")
    if not rest.startswith("="):
        raise ValueError
    v = rest[1:].lstrip(" \t")
    if v.startswith("'"):
        j = v.find("'", 1)
        if j < 0:
            raise ValueError
        after = v[j + 1:]
        if after.strip(" \t") and not re.match(r"[ \t]+#", after):
            raise ValueError
        return name, v[1:j]
    if v.startswith('"'):
        out, i = [], 1
        while True:
            if i >= len(v):
                raise ValueError
            c = v[i]
            if c == "\\" and i + 1 < len(v) and v[i + 1] in 'nt"\\$':
                out.append({"n": "\n", "t": "\t", '"': '"', "\\": "\\", "$": "\0"}[v[i + 1]]); i += 2; continue
            if c == '"':
                break
            out.append(c); i += 1
        after = v[i + 1:]
        if after.strip(" \t") and not re.match(r"[ \t]+#", after):
            raise ValueError
        return name, expand("".join(out), env).replace("\0", "$")
    v = re.split(r"[ \t]#", v, maxsplit=1)[0].strip(" \t")
    return name, expand(v, env)


env = {}
for no, line in enumerate(open(sys.argv[1], encoding="utf-8").read().split("\n"), 1):
    try:
        r = parse_line(line.rstrip("\r"), env)
    except ValueError:
        print(f"error: line {no}", file=sys.stderr)
        sys.exit(1)
    if r:
        env[r[0]] = r[1]
print(json.dumps(env))
PY
chmod +x /app/env2json
