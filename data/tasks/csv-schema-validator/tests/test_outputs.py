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


import json
import random
import subprocess
import tempfile
from pathlib import Path

MAIN_ERRORS = [{'row': 4, 'column': 'age', 'error': 'range'}, {'row': 6, 'column': 'signup', 'error': 'type'}, {'row': 12, 'column': 'customer_id', 'error': 'unique'}, {'row': 13, 'column': 'email', 'error': 'pattern'}, {'row': 14, 'column': 'age', 'error': 'range'}, {'row': 16, 'column': 'signup', 'error': 'type'}, {'row': 17, 'column': 'plan', 'error': 'enum'}, {'row': 22, 'column': 'customer_id', 'error': 'unique'}, {'row': 23, 'column': 'email', 'error': 'pattern'}, {'row': 24, 'column': 'age', 'error': 'type'}, {'row': 26, 'column': 'signup', 'error': 'missing'}, {'row': 27, 'column': 'plan', 'error': 'enum'}, {'row': 29, 'column': 'balance', 'error': 'range'}, {'row': 30, 'column': 'customer_id', 'error': 'missing'}, {'row': 32, 'column': 'customer_id', 'error': 'unique'}, {'row': 33, 'column': 'email', 'error': 'pattern'}, {'row': 34, 'column': 'age', 'error': 'type'}, {'row': 36, 'column': 'signup', 'error': 'missing'}, {'row': 37, 'column': 'plan', 'error': 'enum'}, {'row': 39, 'column': 'balance', 'error': 'range'}, {'row': 40, 'column': 'customer_id', 'error': 'missing'}, {'row': 41, 'column': 'balance', 'error': 'type'}]


def run(schema, text):
    d = Path(tempfile.mkdtemp())
    (d / "schema.json").write_text(json.dumps(schema))
    (d / "data.csv").write_text(text)
    return subprocess.run(["python3", "/app/csvcheck.py", str(d / "schema.json"), str(d / "data.csv")],
                          capture_output=True, text=True, timeout=30)


def hidden_case(seed):
    r = random.Random(seed)
    cols = [
        {"name": "sku", "type": "string", "required": True, "unique": True, "pattern": "[A-Z]{3}-\\d{3}"},
        {"name": "qty", "type": "integer", "min": 0, "max": 1000},
        {"name": "price", "type": "number", "required": True, "min": 0.01},
        {"name": "restock", "type": "date"},
        {"name": "color", "type": "string", "enum": ["red", "green", "blue"]},
        {"name": "lot", "type": "integer", "unique": True},
    ]
    schema = {"columns": cols + ([{"name": "warehouse", "type": "string", "required": True}] if seed % 2 else [])}
    header = ["price", "sku", "note", "qty", "restock", "color", "lot"]
    pools = {
        "sku": ["ABC-123", "ABC-123", "XYZ-999", "abc-123", "QQ-1", "", "LMN-004", "LMN-005"],
        "qty": ["0", "1000", "1001", "-1", "+5", "3.0", "", "42", "007"],
        "price": ["0.01", "0", "12.5", ".5", "5.", "1e2", "abc", "", "-3", "2E-3"],
        "restock": ["2024-02-29", "2023-02-29", "2024-13-01", "24-01-01", "", "2024-1-5", "2024-06-30"],
        "color": ["red", "Red", "blue", "", "purple", "green"],
        "lot": ["1", "2", "2", "01", "x", "", "3"],
        "note": ["a", "b", ""],
    }
    lines = [",".join(header)]
    for _ in range(30):
        lines.append(",".join(r.choice(pools[h]) for h in header))
    if seed % 3 == 0:
        lines.append("ZZZ-777,5")  # short row
    return schema, "\n".join(lines) + "\n"


def test_report_for_given_file():
    report = json.loads(Path("/app/report.json").read_text())
    assert report["valid"] is False
    assert report["errors"] == MAIN_ERRORS


def test_hidden_schemas_and_files():
    for seed in (11, 12, 13, 14, 15, 16):
        schema, text = hidden_case(seed)
        p = run(schema, text)
        want = validate(schema, text)
        got = json.loads(p.stdout)
        assert got["errors"] == want, (seed, text)
        assert got["valid"] is (not want)


def test_exit_status():
    schema, text = hidden_case(3)
    p = run(schema, text)
    assert p.returncode == 1
    want = validate(schema, text)
    assert want and json.loads(p.stdout) == {"valid": False, "errors": want}
    good = "sku,qty,price,lot\nABC-001,5,1.5,1\nABC-002,,2,2\n"
    schema = {"columns": [{"name": "sku", "type": "string", "required": True, "unique": True},
                          {"name": "qty", "type": "integer", "min": 0},
                          {"name": "price", "type": "number", "required": True},
                          {"name": "lot", "type": "integer", "unique": True}]}
    p = run(schema, good)
    assert p.returncode == 0, p.stdout + p.stderr
    assert json.loads(p.stdout) == {"valid": True, "errors": []}
