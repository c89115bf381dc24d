#!/bin/bash
cat > /app/textutils/slug.py <<'PY'
"""URL slugs for blog post titles."""
import re
import unicodedata


def slugify(text, max_length=None):
    """Turn a title into a URL slug (see the rules in the task description)."""
    ascii_text = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode("ascii")
    s = re.sub(r"[^a-z0-9]+", "-", ascii_text.lower()).strip("-")
    if max_length is not None and len(s) > max_length:
        cut = s[: max_length + 1]
        if "-" in cut:
            s = cut[: cut.rindex("-")].strip("-")
        else:
            s = s[:max_length]
    return s or "n-a"
PY
