#!/bin/bash
cat > /app/cron_next.py <<'PY'
import datetime as dt
import json
import re
import sys

MON = ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"]
DOW = ["sun", "mon", "tue", "wed", "thu", "fri", "sat"]
MACROS = {"@yearly": "0 0 1 1 *", "@annually": "0 0 1 1 *", "@monthly": "0 0 1 * *", "@weekly": "0 0 * * 0",
          "@daily": "0 0 * * *", "@midnight": "0 0 * * *", "@hourly": "0 * * * *"}


def value(s, names, offset):
    s = s.lower()
    return names.index(s) + offset if names and s in names else int(s)


def parse_field(spec, lo, hi, names=None, offset=0):
    out = set()
    for part in spec.split(","):
        rng, _, step = part.partition("/")
        step = int(step or 1)
        if rng == "*":
            a, b = lo, hi
        elif "-" in rng:
            x, y = rng.split("-")
            a, b = value(x, names, offset), value(y, names, offset)
        else:
            a = b = value(rng, names, offset)
        out.update(range(a, b + 1, step))
    return out


def runs(fields, ref, n):
    mins, hours = sorted(parse_field(fields[0], 0, 59)), sorted(parse_field(fields[1], 0, 23))
    doms, mons = parse_field(fields[2], 1, 31), parse_field(fields[3], 1, 12, MON, 1)
    dows = {d % 7 for d in parse_field(fields[4], 0, 6, DOW)}
    either = not fields[2].startswith("*") and not fields[4].startswith("*")
    start = ref + dt.timedelta(minutes=1)
    day, out = dt.datetime(start.year, start.month, start.day), []
    while len(out) < n:
        if day.month in mons:
            d_ok, w_ok = day.day in doms, day.isoweekday() % 7 in dows
            if (d_ok or w_ok) if either else (d_ok and w_ok):
                for h in hours:
                    for m in mins:
                        t = day.replace(hour=h, minute=m)
                        if t >= start and len(out) < n:
                            out.append(t.strftime("%Y-%m-%d %H:%M"))
        day += dt.timedelta(days=1)
    return out


def main(path, ref, n):
    ref = dt.datetime.strptime(ref, "%Y-%m-%d %H:%M")
    jobs = []
    for no, line in enumerate(open(path), 1):
        s = line.strip()
        if not s or s.startswith("#") or re.match(r"^[A-Za-z_][A-Za-z0-9_]*\s*=", s):
            continue
        if s.startswith("@"):
            macro, cmd = (s.split(None, 1) + [""])[:2]
            fields = MACROS[macro].split()
        else:
            parts = s.split(None, 5)
            fields, cmd = parts[:5], parts[5] if len(parts) > 5 else ""
        jobs.append({"line": no, "command": cmd.strip(), "next": runs(fields, ref, n)})
    print(json.dumps(jobs))


main(sys.argv[1], sys.argv[2], int(sys.argv[3]))
PY
