"""Convert the CRM export (CSV) into JSON for the web shop.

    python3 to_json.py INPUT.csv OUTPUT.json

The CRM writes its CSV exports in Windows-1252 (cp1252). Columns: id,name,city,note
Output: a JSON list of objects {"id": int, "name": str, "city": str, "note": str},
written as UTF-8 with the characters themselves (no \\u escapes), in input order.
"""
import csv
import json
import sys


def convert(src, dst):
    with open(src, encoding="utf-8", errors="replace", newline="") as f:
        rows = list(csv.DictReader(f))
    out = [{"id": int(r["id"]), "name": r["name"], "city": r["city"], "note": r["note"]} for r in rows]
    with open(dst, "w") as f:
        json.dump(out, f, indent=1)


if __name__ == "__main__":
    convert(sys.argv[1], sys.argv[2])
