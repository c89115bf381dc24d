"""Command-line entry point."""
import argparse
import csv
import json
import sys

from query import matches, parse_where, sort_rows


def load_aliases():
    with open("data/aliases.json") as f:
        return json.load(f)


def main(argv=None):
    p = argparse.ArgumentParser(prog="csvq")
    p.add_argument("file")
    p.add_argument("--select")
    p.add_argument("--where", action="append", default=[])
    p.add_argument("--sort")
    p.add_argument("--desc", action="store_true")
    p.add_argument("--limit", type=int)
    p.add_argument("--format", default="csv")
    a = p.parse_args(argv)
    aliases = load_aliases()
    f = sys.stdin if a.file == "-" else open(a.file, newline="")
    reader = csv.DictReader(f)
    rows = list(reader)
    cols = reader.fieldnames
    for w in a.where:
        col, op, value = parse_where(w)
        col = aliases.get(col, col)
        rows = [r for r in rows if matches(r, col, op, value)]
    if a.sort:
        rows = sort_rows(rows, aliases.get(a.sort, a.sort), a.desc)
    if a.limit:
        rows = rows[: a.limit]
    if a.select:
        cols = [aliases.get(c, c) for c in a.select.split(",")]
    out = [{c: r[c] for c in cols} for r in rows]
    if a.format == "json":
        print(json.dumps(out))
    else:
        w = csv.DictWriter(sys.stdout, fieldnames=cols, lineterminator="\n")
        w.writeheader()
        w.writerows(out)
    return 0
