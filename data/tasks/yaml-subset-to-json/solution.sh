#!/bin/bash
set -e
cat > /app/yaml2json <<'PY'
#!/usr/bin/env python3
import json, re, sys

KEY = re.compile(r"([A-Za-z0-9_.-]+):(?:\s+|$)")


def strip_comment(s):
    out, q, i = [], None, 0
    while i < len(s):
        c = s[i]
        if q == '"':
            out.append(c)
            if c == "\\" and i + 1 < len(s):
                out.append(s[i + 1]); i += 2; continue
            if c == '"':
                q = None
        elif q == "'":
            out.append(c)
            if c == "'":
                if s[i + 1:i + 2] == "'":
                    out.append("'"); i += 2; continue
                q = None
        else:
            prev = "".join(out).rstrip()
            if c in "\"'" and (not prev or prev[-1] in ":-[,"):
                q = c
            elif c == "#" and (not out or out[-1] in " \t"):
                break
            out.append(c)
        i += 1
    return "".join(out).rstrip()


def quoted(s):
    if s[0] == '"':
        out, i = [], 1
        while s[i] != '"':
            if s[i] == "\\":
                out.append({"n": "\n", "t": "\t", '"': '"', "\\": "\\"}.get(s[i + 1], s[i + 1])); i += 2
            else:
                out.append(s[i]); i += 1
        return "".join(out), i + 1
    out, i = [], 1
    while True:
        if s[i] == "'":
            if s[i + 1:i + 2] == "'":
                out.append("'"); i += 2; continue
            return "".join(out), i + 1
        out.append(s[i]); i += 1


def scalar(s):
    s = s.strip()
    if not s:
        return None
    if s[0] in "\"'":
        return quoted(s)[0]
    if s.startswith("[") and s.endswith("]"):
        inner, items, i = s[1:-1], [], 0
        while i < len(inner):
            while i < len(inner) and inner[i] == " ":
                i += 1
            if i >= len(inner):
                break
            if inner[i] in "\"'":
                v, j = quoted(inner[i:])
                items.append(v); i += j
                i = inner.find(",", i) + 1 if "," in inner[i:] else len(inner)
            else:
                j = inner.find(",", i)
                j = len(inner) if j < 0 else j
                items.append(scalar(inner[i:j])); i = j + 1
        return items
    if s in ("null", "~"):
        return None
    if s in ("true", "false"):
        return s == "true"
    if re.fullmatch(r"-?[0-9]+", s):
        return int(s)
    if re.fullmatch(r"-?[0-9]+\.[0-9]+", s):
        return float(s)
    return s


def is_item(c):
    return c == "-" or c.startswith("- ")


class P:
    def __init__(self, text):
        self.lines = []
        for raw in text.split("\n"):
            raw = raw.rstrip("\r")
            body = strip_comment(raw)
            if not body.strip():
                continue
            if not self.lines and body.strip() == "---":
                continue
            self.lines.append([len(body) - len(body.lstrip(" ")), body.strip()])

    def block(self, i, ind):
        if is_item(self.lines[i][1]):
            return self.seq(i, ind)
        return self.map(i, ind)

    def map(self, i, ind):
        out = {}
        while i < len(self.lines) and self.lines[i][0] == ind and not is_item(self.lines[i][1]):
            m = KEY.match(self.lines[i][1])
            key, rest = m.group(1), self.lines[i][1][m.end():]
            i += 1
            if rest.strip():
                out[key] = scalar(rest)
            elif i < len(self.lines) and self.lines[i][0] > ind:
                out[key], i = self.block(i, self.lines[i][0])
            elif i < len(self.lines) and self.lines[i][0] == ind and is_item(self.lines[i][1]):
                out[key], i = self.seq(i, ind)
            else:
                out[key] = None
        return out, i

    def seq(self, i, ind):
        out = []
        while i < len(self.lines) and self.lines[i][0] == ind and is_item(self.lines[i][1]):
            rest = self.lines[i][1][1:].lstrip(" ")
            if not rest:
                i += 1
                if i < len(self.lines) and self.lines[i][0] > ind:
                    v, i = self.block(i, self.lines[i][0])
                else:
                    v = None
                out.append(v)
            elif KEY.match(rest) or is_item(rest):
                col = ind + (len(self.lines[i][1]) - len(rest))
                self.lines[i] = [col, rest]
                v, i = self.block(i, col)
                out.append(v)
            else:
                out.append(scalar(rest))
                i += 1
        return out, i


p = P(open(sys.argv[1], encoding="utf-8").read())
doc, _ = p.block(0, p.lines[0][0]) if p.lines else (None, 0)
print(json.dumps(doc, ensure_ascii=False))
PY
chmod +x /app/yaml2json
