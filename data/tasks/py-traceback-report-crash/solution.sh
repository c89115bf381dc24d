#!/bin/bash
set -e
python3 - <<'PY'
p = "/app/report.py"
s = open(p).read()
s = s.replace('o["price"] * o["qty"]', 'o["price"] * o.get("qty", 1)')
s = s.replace('''        avg = totals[customer] / counts[customer]
        rows.append(f"{customer} {counts[customer]} {avg:.2f}")''',
'''        if counts[customer] == 0:
            rows.append(f"{customer} 0 n/a")
            continue
        avg = totals[customer] / counts[customer]
        rows.append(f"{customer} {counts[customer]} {avg:.2f}")''')
open(p, "w").write(s)
PY
