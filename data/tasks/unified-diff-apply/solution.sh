#!/bin/bash
set -e
cat > /app/apply-patch <<'PY'
#!/usr/bin/env python3
import os, re, sys

HUNK = re.compile(r"@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")


class Fail(Exception):
    pass


def path_of(line):
    p = line[4:].split("\t")[0].strip()
    return None if p == "/dev/null" else p.split("/", 1)[1] if "/" in p else p


def parse(text):
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    files, i = [], 0
    while i < len(lines):
        if lines[i].startswith("--- ") and i + 1 < len(lines) and lines[i + 1].startswith("+++ "):
            old, new = path_of(lines[i]), path_of(lines[i + 1])
            hunks, i = [], i + 2
            while i < len(lines) and lines[i].startswith("@@"):
                m = HUNK.match(lines[i])
                a, b = int(m[1]), int(m[2]) if m[2] is not None else 1
                c, d = int(m[3]), int(m[4]) if m[4] is not None else 1
                body, i = [], i + 1
                ob, nb = 0, 0
                while i < len(lines) and (ob < b or nb < d or lines[i].startswith("\\")):
                    l = lines[i]
                    if l.startswith("\\"):
                        body.append(("\\", ""))
                    else:
                        tag = l[:1] or " "
                        body.append((tag, l[1:]))
                        ob += tag in " -"
                        nb += tag in " +"
                    i += 1
                hunks.append((a, b, body))
            files.append((old, new, hunks))
        else:
            i += 1
    return files


def apply(content, hunks, name):
    # content: list of (text, has_newline)
    out, pos = [], 0
    for a, b, body in hunks:
        start = a - 1 if b > 0 else a
        if start < pos or start > len(content):
            raise Fail(f"error: {name}: hunk at line {a} does not apply")
        out += content[pos:start]
        pos = start
        old, new = [], []
        for k, (tag, text) in enumerate(body):
            if tag == "\\":
                continue
            nl = not (k + 1 < len(body) and body[k + 1][0] == "\\")
            if tag in " -":
                old.append((text, nl))
            if tag in " +":
                new.append((text, nl))
        # context line followed by marker: no newline on both sides
        if content[pos:pos + len(old)] != old:
            raise Fail(f"error: {name}: hunk at line {a} does not match")
        out += new
        pos += len(old)
    out += content[pos:]
    return out


def load(path):
    data = open(path, encoding="utf-8", newline="").read()
    parts = data.split("\n")
    res = [(p, True) for p in parts[:-1]]
    if parts[-1] != "":
        res.append((parts[-1], False))
    return res


def main():
    files = parse(open(sys.argv[1], encoding="utf-8", newline="").read())
    plan = []
    for old, new, hunks in files:
        name = new or old
        if old is None:
            if os.path.exists(new):
                raise Fail(f"error: {new}: already exists")
            plan.append((new, apply([], hunks, new)))
        else:
            if not os.path.isfile(old):
                raise Fail(f"error: {old}: no such file")
            result = apply(load(old), hunks, old)
            plan.append((old, None) if new is None else (new, result))
    for name, result in plan:
        if result is None:
            os.remove(name)
        else:
            if os.path.dirname(name):
                os.makedirs(os.path.dirname(name), exist_ok=True)
            with open(name, "w", encoding="utf-8", newline="") as f:
                f.write("".join(t + ("\n" if nl else "") for t, nl in result))


try:
    main()
except Fail as e:
    print(e, file=sys.stderr)
    sys.exit(1)
PY
chmod +x /app/apply-patch
