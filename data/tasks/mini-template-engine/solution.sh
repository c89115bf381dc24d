#!/bin/bash
set -e
cat > /app/minitpl.py <<'PY'
import html
import re


class TemplateSyntaxError(Exception):
    pass


UNDEF = object()
TOKEN = re.compile(r"(\{\{.*?\}\}|\{%.*?%\}|\{#.*?#\})", re.S)
FILTER = re.compile(r'\s*([a-z]+)(?::"([^"]*)")?\s*$')
FILTERS = {"upper", "lower", "title", "length", "default", "join", "safe"}


def tokenize(t):
    out, pos = [], 0
    for m in TOKEN.finditer(t):
        out.append(("text", t[pos:m.start()]))
        out.append(("tag", m.group(0)))
        pos = m.end()
    rest = t[pos:]
    if "{{" in rest or "{%" in rest or "{#" in rest:
        raise TemplateSyntaxError("unclosed tag")
    out.append(("text", rest))
    return out


def parse_expr(s):
    parts = [p.strip() for p in s.split("|")]
    path = parts[0]
    neg = False
    if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z0-9_]+)*", path):
        raise TemplateSyntaxError("bad expression %r" % s)
    filters = []
    for f in parts[1:]:
        m = FILTER.match(f)
        if not m or m.group(1) not in FILTERS:
            raise TemplateSyntaxError("unknown filter %r" % f)
        filters.append((m.group(1), m.group(2)))
    return (path.split("."), filters)


def parse(tokens, i, ends):
    nodes = []
    while i < len(tokens):
        kind, val = tokens[i]
        i += 1
        if kind == "text":
            nodes.append(("text", val))
            continue
        if val.startswith("{#"):
            continue
        if val.startswith("{{"):
            nodes.append(("expr", parse_expr(val[2:-2])))
            continue
        words = val[2:-2].split()
        if not words:
            raise TemplateSyntaxError("empty tag")
        w = words[0]
        if w in ends:
            return nodes, i, w
        if w == "if":
            neg = len(words) > 1 and words[1] == "not"
            expr = parse_expr(" ".join(words[2:] if neg else words[1:]))
            body, i, end = parse(tokens, i, ("else", "endif"))
            other = []
            if end == "else":
                other, i, end = parse(tokens, i, ("endif",))
            nodes.append(("if", neg, expr, body, other))
        elif w == "for":
            if len(words) < 4 or words[2] != "in":
                raise TemplateSyntaxError("bad for")
            expr = parse_expr(" ".join(words[3:]))
            body, i, end = parse(tokens, i, ("endfor",))
            nodes.append(("for", words[1], expr, body))
        else:
            raise TemplateSyntaxError("unexpected tag %r" % w)
    if ends:
        raise TemplateSyntaxError("unclosed block, expected %s" % "/".join(ends))
    return nodes, i, None


def lookup(ctx, path):
    v = ctx.get(path[0], UNDEF) if isinstance(ctx, dict) else UNDEF
    for p in path[1:]:
        if v is UNDEF:
            return UNDEF
        if isinstance(v, dict):
            v = v.get(p, UNDEF)
        elif isinstance(v, (list, tuple)) and p.isdigit():
            v = v[int(p)] if int(p) < len(v) else UNDEF
        else:
            v = getattr(v, p, UNDEF)
    return v


def evaluate(expr, ctx):
    path, filters = expr
    v, safe = lookup(ctx, path), False
    for name, arg in filters:
        if name == "default":
            if v is UNDEF or v is None or v == "":
                v = arg
        elif name == "safe":
            safe = True
        elif name == "join":
            v = arg.join(str(x) for x in v)
        elif name == "length":
            v = len(v)
        else:
            v = getattr(str(v), name)()
    return v, safe


def run(nodes, ctx, out):
    for n in nodes:
        if n[0] == "text":
            out.append(n[1])
        elif n[0] == "expr":
            v, safe = evaluate(n[1], ctx)
            s = "" if v is UNDEF or v is None else str(v)
            out.append(s if safe else html.escape(s, quote=True))
        elif n[0] == "if":
            v, _ = evaluate(n[2], ctx)
            truth = v is not UNDEF and bool(v)
            run(n[3] if truth != n[1] else n[4], ctx, out)
        else:
            seq, _ = evaluate(n[2], ctx)
            if seq is UNDEF or seq is None:
                continue
            items = list(seq)
            for k, item in enumerate(items):
                inner = dict(ctx)
                inner[n[1]] = item
                inner["loop"] = {"index": k + 1, "first": k == 0, "last": k == len(items) - 1}
                run(n[3], inner, out)


def render(template, context):
    nodes, _, _ = parse(tokenize(template), 0, ())
    out = []
    run(nodes, dict(context), out)
    return "".join(out)
PY
