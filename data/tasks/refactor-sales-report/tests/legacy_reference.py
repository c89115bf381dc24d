#!/usr/bin/env python3
# Legacy sales report. Usage: python3 sales_report.py FILE [--format text|csv] [--min-total N]
import sys
args = sys.argv[1:]
fmt = "text"
mn = 0.0
fn = None
i = 0
while i < len(args):
    if args[i] == "--format":
        fmt = args[i+1]; i += 2; continue
    if args[i] == "--min-total":
        mn = float(args[i+1]); i += 2; continue
    fn = args[i]; i += 1
data = {}
bad = 0
for line in open(fn):
    line = line.strip()
    if not line or line.startswith("#"):
        continue
    p = line.split(";")
    if len(p) != 4:
        bad += 1; continue
    try:
        q = int(p[2]); pr = float(p[3])
    except ValueError:
        bad += 1; continue
    if q <= 0:
        bad += 1; continue
    r = p[0].strip().title(); prod = p[1].strip().lower()
    if r not in data: data[r] = {}
    if prod not in data[r]: data[r][prod] = [0, 0.0]
    data[r][prod][0] += q
    data[r][prod][1] += q * pr
rows = []
for r in data:
    t = 0.0; n = 0
    for prod in data[r]:
        t += data[r][prod][1]; n += data[r][prod][0]
    best = sorted(data[r].items(), key=lambda kv: (-kv[1][1], kv[0]))[0][0]
    if t >= mn:
        rows.append((r, n, round(t, 2), best))
rows.sort(key=lambda x: (-x[2], x[0]))
if fmt == "csv":
    print("region,units,total,top_product")
    for r in rows:
        print("%s,%d,%.2f,%s" % r)
else:
    w = max([len(r[0]) for r in rows] + [6])
    print("Region".ljust(w) + "  Units     Total  Top")
    for r in rows:
        print(r[0].ljust(w) + "  " + str(r[1]).rjust(5) + "  " + ("%.2f" % r[2]).rjust(8) + "  " + r[3])
    print("-" * (w + 23))
    print("TOTAL".ljust(w) + "  " + str(sum(r[1] for r in rows)).rjust(5) + "  " + ("%.2f" % sum(r[2] for r in rows)).rjust(8))
if bad:
    sys.stderr.write("skipped %d bad lines\n" % bad)
