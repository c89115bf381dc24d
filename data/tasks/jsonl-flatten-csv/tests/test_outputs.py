import csv
import json
import random
import subprocess
import tempfile
from pathlib import Path

def flatten(obj, prefix=""):
    out = {}
    if isinstance(obj, dict):
        for k, v in obj.items():
            out.update(flatten(v, f"{prefix}.{k}" if prefix else k))
    elif isinstance(obj, list):
        for i, v in enumerate(obj):
            out.update(flatten(v, f"{prefix}.{i}" if prefix else str(i)))
    else:
        if obj is None:
            s = ""
        elif obj is True:
            s = "true"
        elif obj is False:
            s = "false"
        else:
            s = obj if isinstance(obj, str) else json.dumps(obj)
        out[prefix] = s
    return out


def expected(lines):
    recs = [flatten(json.loads(l)) for l in lines if l.strip()]
    cols = sorted({k for r in recs for k in r})
    return cols, [[r.get(c, "") for c in cols] for r in recs]


def rec(r, i):
    d = {"id": i, "ok": r.random() < 0.5, "meta": {"src": r.choice(["web", "app, ios", "a\\nb"]), "v": r.choice([1, 2.5, -3])}}
    if r.random() < 0.5:
        d["pts"] = [[r.randint(0, 9), r.randint(0, 9)] for _ in range(r.randint(1, 2))]
    if r.random() < 0.4:
        d["note"] = None
    if r.random() < 0.3:
        d["deep"] = {"a": {"b": {"c": "x"}}}
    return d


def read(path):
    rows = list(csv.reader(Path(path).read_text(encoding="utf-8").splitlines(keepends=False)))
    return rows[0], [r for r in rows[1:]]


def test_events_csv():
    lines = Path("/app/events.jsonl").read_text(encoding="utf-8").splitlines()
    cols, rows = expected(lines)
    header, body = read("/app/events.csv")
    assert header == cols
    assert body == rows


def test_flatten_hidden_input():
    r = random.Random(2024)
    lines = [json.dumps(rec(r, i)) for i in range(30)]
    lines.insert(5, "")
    d = Path(tempfile.mkdtemp())
    (d / "in.jsonl").write_text("\n".join(lines) + "\n")
    p = subprocess.run(["python3", "/app/flatten.py", str(d / "in.jsonl"), str(d / "out.csv")],
                       capture_output=True, text=True, timeout=30)
    assert p.returncode == 0, p.stderr
    cols, rows = expected(lines)
    header, body = read(d / "out.csv")
    assert header == cols
    assert body == rows
