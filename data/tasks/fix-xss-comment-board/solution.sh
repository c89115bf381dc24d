#!/bin/bash
cat > /app/board.py <<'PY'
import html
import re

_URL = re.compile(r"https?://[^\s\"'<>]+", re.I)
_COLOR = re.compile(r"#[0-9a-fA-F]{6}")


def _s(v):
    return v if isinstance(v, str) else ("" if v is None else str(v))


def render_comment(c):
    author = html.escape(_s(c.get("author", "")), quote=True)
    text = html.escape(_s(c.get("text", "")), quote=True).replace("\n", "<br>")
    color = _s(c.get("color", ""))
    color = color if _COLOR.fullmatch(color) else "#333333"
    website = _s(c.get("website", ""))
    if website and _URL.fullmatch(website):
        name = f'<a class="author" href="{html.escape(website, quote=True)}" rel="nofollow">{author}</a>'
    else:
        name = f'<span class="author">{author}</span>'
    return f'<div class="comment" style="border-color: {color}">{name}<p>{text}</p></div>'


def render_comments(comments):
    return "\n".join(render_comment(c) for c in comments)
PY
