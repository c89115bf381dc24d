#!/bin/bash
set -e
cd /app/csvq-project
cat > pyproject.toml <<'PY'
[build-system]
requires = ["setuptools>=61"]
build-backend = "setuptools.build_meta"

[project]
name = "csvq"
version = "0.3.0"
description = "Query CSV files from the command line"
requires-python = ">=3.9"

[project.scripts]
csvq = "csvq.cli:main"

[tool.setuptools.packages.find]
where = ["src"]

[tool.setuptools.package-data]
csvq = ["data/*.json"]
PY
cat > src/csvq/query.py <<'PY'
"""Row filtering and sorting."""
import operator

OPS = {"!=": operator.ne, "<=": operator.le, ">=": operator.ge, "=": operator.eq, "<": operator.lt, ">": operator.gt}


def parse_where(expr):
    best = None
    for i in range(len(expr)):
        for op in ("!=", "<=", ">=", "=", "<", ">"):
            if expr.startswith(op, i):
                best = (i, op)
                break
        if best:
            break
    if not best:
        raise ValueError("bad expression: %s" % expr)
    i, op = best
    col, value = expr[:i].strip(), expr[i + len(op):].strip()
    if not col:
        raise ValueError("bad expression: %s" % expr)
    return col, op, value


def num(s):
    try:
        return float(s)
    except ValueError:
        return None


def matches(row, col, op, value):
    a, b = num(row[col]), num(value)
    if a is not None and b is not None:
        return OPS[op](a, b)
    return OPS[op](row[col], value)


def sort_rows(rows, col, desc=False):
    numeric = all(num(r[col]) is not None for r in rows)
    return sorted(rows, key=(lambda r: num(r[col])) if numeric else (lambda r: r[col]), reverse=desc)
PY
cat > src/csvq/cli.py <<'PY'
"""Command-line entry point."""
import argparse
import csv
import importlib.metadata
import importlib.resources
import json
import sys

from .query import matches, parse_where, sort_rows


class CsvqError(Exception):
    pass


def load_aliases():
    return json.loads(importlib.resources.files("csvq").joinpath("data/aliases.json").read_text())


def run(a):
    aliases = load_aliases()
    try:
        f = sys.stdin if a.file == "-" else open(a.file, newline="")
    except OSError as e:
        raise CsvqError(str(e))
    reader = csv.DictReader(f)
    rows = list(reader)
    cols = reader.fieldnames or []

    def col(c):
        c = aliases.get(c, c)
        if c not in cols:
            raise CsvqError("unknown column: %s" % c)
        return c
    for w in a.where:
        try:
            c, op, value = parse_where(w)
        except ValueError as e:
            raise CsvqError(str(e))
        c = col(c)
        rows = [r for r in rows if matches(r, c, op, value)]
    if a.sort:
        rows = sort_rows(rows, col(a.sort), a.desc)
    if a.limit is not None:
        rows = rows[: a.limit]
    if a.select:
        cols = [col(c) for c in a.select.split(",")]
    out = [{c: r[c] for c in cols} for r in rows]
    if a.format == "json":
        print(json.dumps(out))
    else:
        w = csv.DictWriter(sys.stdout, fieldnames=cols, lineterminator="\n")
        w.writeheader()
        w.writerows(out)


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    if argv == ["--version"]:
        print("csvq %s" % importlib.metadata.version("csvq"))
        return 0
    p = argparse.ArgumentParser(prog="csvq")
    p.add_argument("file")
    p.add_argument("--select")
    p.add_argument("--where", action="append", default=[])
    p.add_argument("--sort")
    p.add_argument("--desc", action="store_true")
    p.add_argument("--limit", type=int)
    p.add_argument("--format", default="csv", choices=["csv", "json"])
    a = p.parse_args(argv)
    try:
        run(a)
    except CsvqError as e:
        print("csvq: %s" % e, file=sys.stderr)
        return 1
    return 0
PY
pip install --no-index --no-build-isolation /app/csvq-project
