#!/bin/bash
set -e
python3 - <<'PY'
p = "/app/du_tree.py"
s = open(p).read()
s = s.replace("    totals = {node: total(node, children, own) for node in own}\n", '''    totals = dict(own)
    order, stack = [], [n for n in own if n not in parent_of]
    while stack:
        n = stack.pop()
        order.append(n)
        stack.extend(children[n])
    for n in reversed(order):
        if n in parent_of:
            totals[parent_of[n]] += totals[n]
''')
s = s.replace("    own = {}\n", "    own = {}\n    parent_of = {}\n")
s = s.replace("            children[parent].append(node)\n", "            children[parent].append(node)\n            parent_of[node] = parent\n")
open(p, "w").write(s)
PY
