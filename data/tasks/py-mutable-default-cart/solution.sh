#!/bin/bash
set -e
python3 - <<'PY'
p = "/app/cart.py"
s = open(p).read()
s = s.replace("def add_item(name, qty, cart=[]):", "def add_item(name, qty, cart=None):")
s = s.replace('    """\n    for entry', '    """\n    if cart is None:\n        cart = []\n    for entry', 1)
open(p, "w").write(s)
PY
