#!/bin/bash
python3 - <<'PY'
p = "/app/stats.py"
s = open(p).read()
s = s.replace("""    if n % 2 == 0:
        return xs[mid]
    return (xs[mid - 1] + xs[mid]) / 2""", """    if n % 2 == 1:
        return xs[mid]
    return (xs[mid - 1] + xs[mid]) / 2""")
s = s.replace("return sum((x - m) ** 2 for x in xs) / len(xs)", "return sum((x - m) ** 2 for x in xs) / (len(xs) - 1)")
open(p, "w").write(s)
PY
