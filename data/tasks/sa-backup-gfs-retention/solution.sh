#!/bin/bash
set -e
cat > /app/prune.py <<'PY'
import argparse
import os
import re
from collections import defaultdict
from datetime import datetime

PAT = re.compile(r"^([A-Za-z0-9-]+)_(\d{4}-\d{2}-\d{2}_\d{6})\.tar\.gz$")
ap = argparse.ArgumentParser()
ap.add_argument("dir")
ap.add_argument("--daily", type=int, default=0)
ap.add_argument("--weekly", type=int, default=0)
ap.add_argument("--monthly", type=int, default=0)
ap.add_argument("--dry-run", action="store_true")
a = ap.parse_args()
groups = defaultdict(list)
for f in os.listdir(a.dir):
    m = PAT.match(f)
    if m and os.path.isfile(os.path.join(a.dir, f)):
        try:
            ts = datetime.strptime(m.group(2), "%Y-%m-%d_%H%M%S")
        except ValueError:
            continue
        groups[m.group(1)].append((ts, f))
keep, delete = set(), []
for name, items in groups.items():
    items.sort(reverse=True)
    for n, key in ((a.daily, lambda t: t.date()), (a.weekly, lambda t: t.isocalendar()[:2]),
                   (a.monthly, lambda t: (t.year, t.month))):
        seen = []
        for ts, f in items:
            k = key(ts)
            if k in seen:
                continue
            if len(seen) >= n:
                break
            seen.append(k)
            keep.add(f)
    delete += [f for _, f in items if f not in keep]
for f in sorted(delete):
    print(("would delete " if a.dry_run else "delete ") + f)
    if not a.dry_run:
        os.remove(os.path.join(a.dir, f))
print(f"kept {len(keep)}, deleted {len(delete)}")
PY
