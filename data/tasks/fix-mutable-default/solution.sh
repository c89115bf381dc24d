#!/bin/bash
set -e
python3 - <<'PY'
p = "/app/tagging.py"
s = open(p).read()
s = s.replace("def add_tag(tag, tags=[]):", "def add_tag(tag, tags=None):")
s = s.replace("    tag = tag.lower()\n", "    if tags is None:\n        tags = []\n    tag = tag.lower()\n")
open(p, "w").write(s)
PY
