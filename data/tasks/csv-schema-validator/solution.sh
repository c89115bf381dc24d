#!/bin/bash
cat > /app/csvcheck.py <<'PY'
import json
import sys
import csv
import datetime
import re

INT = re.compile(r"[+-]?\d+")
NUM = re.compile(r"[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?")


def parse_value(kind, v):
    """Return the typed value, or raise ValueError."""
    if kind == "integer":
        if not INT.fullmatch(v):
            raise ValueError
        return int(v)
    if kind == "number":
        if not NUM.fullmatch(v):
            raise ValueError
        return float(v)
    if kind == "date":
        if not re.fullmatch(r"\d{4}-\d{2}-\d{2}", v):
            raise ValueError
        return datetime.date.fromisoformat(v)
    return v


def validate(schema, text):
    rows = list(csv.reader(text.splitlines()))
    header = rows[0]
    errors = []
    cols = schema["columns"]
    for c in cols:
        if c["name"] not in header:
            errors.append({"row": 1, "column": c["name"], "error": "missing_column"})
    seen = {c["name"]: set() for c in cols}
    for i, row in enumerate(rows[1:], start=2):
        rec = dict(zip(header, row))
        for c in cols:
            name = c["name"]
            if name not in header:
                continue
            v = rec.get(name, "")
            if v == "":
                if c.get("required"):
                    errors.append({"row": i, "column": name, "error": "missing"})
                continue
            try:
                val = parse_value(c.get("type", "string"), v)
            except ValueError:
                errors.append({"row": i, "column": name, "error": "type"})
                continue
            if "pattern" in c and not re.fullmatch(c["pattern"], v):
                errors.append({"row": i, "column": name, "error": "pattern"})
            elif "enum" in c and v not in c["enum"]:
                errors.append({"row": i, "column": name, "error": "enum"})
            elif ("min" in c and val < c["min"]) or ("max" in c and val > c["max"]):
                errors.append({"row": i, "column": name, "error": "range"})
            elif c.get("unique"):
                if val in seen[name]:
                    errors.append({"row": i, "column": name, "error": "unique"})
                seen[name].add(val)
    return errors


if __name__ == "__main__":
    schema = json.load(open(sys.argv[1]))
    errors = validate(schema, open(sys.argv[2], newline="").read())
    print(json.dumps({"valid": not errors, "errors": errors}))
    sys.exit(1 if errors else 0)
PY
python3 /app/csvcheck.py /app/schema.json /app/customers.csv > /app/report.json || true
test -s /app/report.json
