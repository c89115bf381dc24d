#!/bin/bash
set -e
cat > /app/render <<'PY'
#!/usr/bin/env python3
import html, json, re, sys

TAG = re.compile(r"\{\{\{\s*(.*?)\s*\}\}\}|\{\{\s*(.*?)\s*\}\}", re.S)


class Err(Exception):
    pass


def parse(src):
    root = []
    stack = [("root", None, root, None)]
    pos = 0
    for m in TAG.finditer(src):
        cur = stack[-1]
        target = cur[3] if cur[3] is not None else cur[2]
        if m.start() > pos:
            target.append(("text", src[pos:m.start()]))
        pos = m.end()
        if m.group(1) is not None:
            target.append(("raw", m.group(1)))
            continue
        tag = m.group(2)
        if tag.startswith("#"):
            kind, _, path = tag[1:].partition(" ")
            if kind not in ("if", "each"):
                raise Err(f"unknown block {kind}")
            node = [kind, path.strip(), [], None]
            target.append(node)
            stack.append((kind, path, node[2], None))
            stack[-1] = (kind, path, node[2], None)
            stack[-1] = (kind, node, node[2], None)
        elif tag == "else":
            if len(stack) == 1 or stack[-1][3] is not None:
                raise Err("stray else")
            kind, node, body, _ = stack[-1]
            node[3] = []
            stack[-1] = (kind, node, body, node[3])
        elif tag.startswith("/"):
            if len(stack) == 1 or stack[-1][0] != tag[1:].strip():
                raise Err(f"unexpected {tag}")
            stack.pop()
        else:
            target.append(("esc", tag))
    if len(stack) != 1:
        raise Err("unclosed block")
    cur = root
    if pos < len(src):
        root.append(("text", src[pos:]))
    return root


def lookup(path, ctxs):
    path = path.strip()
    depth = 0
    while path.startswith("../"):
        depth += 1
        path = path[3:]
    if depth >= len(ctxs):
        return None
    ctx, idx = ctxs[-1 - depth]
    if path == "this":
        return ctx
    if path == "@index":
        return idx
    v = ctx
    for k in path.split("."):
        if isinstance(v, dict) and k in v:
            v = v[k]
        else:
            return None
    return v


def fmt(v):
    if v is None:
        return ""
    if v is True:
        return "true"
    if v is False:
        return "false"
    if isinstance(v, str):
        return v
    if isinstance(v, (dict, list)):
        return json.dumps(v, separators=(",", ":"), ensure_ascii=False)
    return json.dumps(v)


def render(nodes, ctxs, out):
    for n in nodes:
        if n[0] == "text":
            out.append(n[1])
        elif n[0] == "raw":
            out.append(fmt(lookup(n[1], ctxs)))
        elif n[0] == "esc":
            out.append(html.escape(fmt(lookup(n[1], ctxs)), quote=True).replace("&#x27;", "&#39;"))
        elif n[0] == "if":
            v = lookup(n[1], ctxs)
            truthy = v not in (None, False, 0, "") and v != [] and v != {}
            if v is True or (truthy and v is not False):
                render(n[2], ctxs, out)
            elif n[3]:
                render(n[3], ctxs, out)
        elif n[0] == "each":
            v = lookup(n[1], ctxs)
            if isinstance(v, list) and v:
                for i, item in enumerate(v):
                    render(n[2], ctxs + [(item, i)], out)
            elif n[3]:
                render(n[3], ctxs, out)


try:
    tree = parse(open(sys.argv[1], encoding="utf-8").read())
except Err as e:
    print(f"error: {e}", file=sys.stderr)
    sys.exit(1)
data = json.load(open(sys.argv[2], encoding="utf-8"))
out = []
render(tree, [(data, None)], out)
sys.stdout.write("".join(out))
PY
chmod +x /app/render
