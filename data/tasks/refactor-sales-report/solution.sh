#!/bin/bash
set -e
mkdir -p /app/salesreport
touch /app/salesreport/__init__.py
cat > /app/salesreport/parsing.py <<'PY'
def parse_lines(lines):
    records, bad = [], 0
    for line in lines:
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        p = line.split(";")
        if len(p) != 4:
            bad += 1
            continue
        try:
            q, pr = int(p[2]), float(p[3])
        except ValueError:
            bad += 1
            continue
        if q <= 0:
            bad += 1
            continue
        records.append((p[0].strip().title(), p[1].strip().lower(), q, pr))
    return records, bad
PY
cat > /app/salesreport/summary.py <<'PY'
def summarize(records, min_total=0.0):
    data = {}
    for r, prod, q, pr in records:
        e = data.setdefault(r, {}).setdefault(prod, [0, 0.0])
        e[0] += q
        e[1] += q * pr
    rows = []
    for r, prods in data.items():
        t, n = 0.0, 0
        for prod in prods:
            t += prods[prod][1]
            n += prods[prod][0]
        best = sorted(prods.items(), key=lambda kv: (-kv[1][1], kv[0]))[0][0]
        if t >= min_total:
            rows.append((r, n, round(t, 2), best))
    rows.sort(key=lambda x: (-x[2], x[0]))
    return rows
PY
cat > /app/salesreport/render.py <<'PY'
def render_csv(rows):
    return "region,units,total,top_product\n" + "".join("%s,%d,%.2f,%s\n" % r for r in rows)


def render_text(rows):
    w = max([len(r[0]) for r in rows] + [6])
    out = ["Region".ljust(w) + "  Units     Total  Top"]
    for r in rows:
        out.append(r[0].ljust(w) + "  " + str(r[1]).rjust(5) + "  " + ("%.2f" % r[2]).rjust(8) + "  " + r[3])
    out.append("-" * (w + 23))
    out.append("TOTAL".ljust(w) + "  " + str(sum(r[1] for r in rows)).rjust(5) + "  "
               + ("%.2f" % sum(r[2] for r in rows)).rjust(8))
    return "".join(line + "\n" for line in out)
PY
cat > /app/salesreport/cli.py <<'PY'
import argparse
import sys

from .parsing import parse_lines
from .render import render_csv, render_text
from .summary import summarize


def main(argv=None):
    p = argparse.ArgumentParser()
    p.add_argument("file")
    p.add_argument("--format", default="text")
    p.add_argument("--min-total", type=float, default=0.0)
    a = p.parse_args(argv)
    with open(a.file) as f:
        records, bad = parse_lines(f)
    rows = summarize(records, a.min_total)
    sys.stdout.write(render_csv(rows) if a.format == "csv" else render_text(rows))
    if bad:
        sys.stderr.write("skipped %d bad lines\n" % bad)
    return 0
PY
cat > /app/sales_report.py <<'PY'
#!/usr/bin/env python3
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from salesreport.cli import main

sys.exit(main())
PY
