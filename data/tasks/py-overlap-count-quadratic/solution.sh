#!/bin/bash
set -e
python3 - <<'PY'
p = "/app/overlaps.py"
s = open(p).read()
start = s.index("def count_overlaps")
end = s.index("def main")
s = s[:start] + '''def count_overlaps(bookings):
    # other bookings overlapping [s, e) = all others - those ending at or before s - those starting at or after e
    starts = sorted(b[1] for b in bookings)
    ends = sorted(b[2] for b in bookings)
    n = len(bookings)
    counts = []
    for _, s1, e1 in bookings:
        ended = bisect.bisect_right(ends, s1)
        later = n - bisect.bisect_left(starts, e1)
        counts.append(n - 1 - ended - later)
    return counts


''' + s[end:]
s = s.replace("import csv\n", "import bisect\nimport csv\n")
open(p, "w").write(s)
PY
