import csv
import io
import json
import os
import random
import shutil
import subprocess
import sys

import pytest

VENV = "/tmp/csvq-test-venv"
HEADER = ["product_code", "customer", "quantity", "amount", "city"]


def make_csv(path, seed, n=40):
    rng = random.Random(seed)
    rows = []
    for i in range(n):
        rows.append({"product_code": "P%03d" % rng.randint(0, 60), "customer": rng.choice(["ann", "Bob", "cy", "dee", "Eve"]),
                     "quantity": str(rng.choice([1, 2, 3, 10, 20, 100, 7])), "amount": "%d.%d" % (rng.randint(0, 300), rng.randint(0, 9)),
                     "city": rng.choice(["Oslo", "rome", "Lima", "10", "9"])})
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=HEADER, lineterminator="\n")
        w.writeheader()
        w.writerows(rows)
    return rows


def csvq(*args, exe="csvq", cwd="/tmp", stdin=None):
    return subprocess.run([exe, *map(str, args)], capture_output=True, text=True, cwd=cwd, input=stdin, timeout=120,
                          env=dict(os.environ, PATH="/usr/local/bin:/usr/bin:/bin"))


def parse(out):
    return list(csv.DictReader(io.StringIO(out)))


def num(s):
    try:
        return float(s)
    except ValueError:
        return None


def cmp(a, op, b):
    x, y = num(a), num(b)
    if x is None or y is None:
        x, y = a, b
    return {"=": x == y, "!=": x != y, "<": x < y, "<=": x <= y, ">": x > y, ">=": x >= y}[op]


def test_system_install_works(tmp_path):
    r = csvq("--version")
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "csvq 0.3.0"
    rows = make_csv(tmp_path / "a.csv", 1)
    r = csvq(tmp_path / "a.csv")
    assert r.returncode == 0, r.stderr
    assert parse(r.stdout) == rows
    loc = subprocess.run(["/usr/bin/python3", "-c", "import csvq; print(csvq.__file__)"], capture_output=True, text=True, cwd="/", timeout=60)
    assert loc.returncode == 0 and not loc.stdout.startswith("/app/"), loc.stdout


def test_fresh_venv_build(tmp_path):
    shutil.rmtree(VENV, ignore_errors=True)
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", "--system-site-packages", VENV], check=True, timeout=120)
    r = subprocess.run([VENV + "/bin/python", "-m", "pip", "install", "--no-build-isolation", "--no-index", "--force-reinstall", "--no-deps",
                        "/app/csvq-project"], capture_output=True, text=True, timeout=240)
    assert r.returncode == 0, r.stdout[-2000:] + r.stderr[-2000:]
    loc = subprocess.run([VENV + "/bin/python", "-c", "import csvq, os; print(csvq.__file__); "
                          "print(os.path.exists(os.path.join(os.path.dirname(csvq.__file__), 'data', 'aliases.json')))"],
                         capture_output=True, text=True, cwd="/", timeout=60)
    path, has_data = loc.stdout.split()
    assert path.startswith(VENV) and has_data == "True"
    rows = make_csv(tmp_path / "v.csv", 2)
    r = csvq(tmp_path / "v.csv", "--where", "qty>=10", "--select", "sku,qty", exe=VENV + "/bin/csvq", cwd=str(tmp_path))
    assert r.returncode == 0, r.stderr
    assert parse(r.stdout) == [{"product_code": x["product_code"], "quantity": x["quantity"]} for x in rows if float(x["quantity"]) >= 10]


def test_where_and_sort(tmp_path):
    rows = make_csv(tmp_path / "w.csv", 3, 60)
    rng = random.Random(30)
    for _ in range(12):
        col = rng.choice(["quantity", "amount", "city", "customer"])
        op = rng.choice(["=", "!=", "<", "<=", ">", ">="])
        val = rng.choice([rows[rng.randrange(len(rows))][col], "10", "Lima", "50.5"])
        r = csvq(tmp_path / "w.csv", "--where", "%s%s%s" % (col, op, val))
        assert r.returncode == 0, r.stderr
        assert parse(r.stdout) == [x for x in rows if cmp(x[col], op, val)], (col, op, val)
    r = csvq(tmp_path / "w.csv", "--where", "amount > 100", "--where", "cust != Bob", "--sort", "qty", "--desc", "--limit", "5")
    want = [x for x in rows if float(x["amount"]) > 100 and x["customer"] != "Bob"]
    want = sorted(want, key=lambda x: float(x["quantity"]), reverse=True)[:5]
    assert parse(r.stdout) == want
    r = csvq(tmp_path / "w.csv", "--sort", "city")
    assert parse(r.stdout) == sorted(rows, key=lambda x: x["city"])
    r = csvq(tmp_path / "w.csv", "--sort", "amount")
    assert parse(r.stdout) == sorted(rows, key=lambda x: float(x["amount"]))


def test_select_json_aliases_errors(tmp_path):
    rows = make_csv(tmp_path / "s.csv", 4)
    r = csvq(tmp_path / "s.csv", "--select", "city,amt,cust", "--format", "json", "--limit", "3", cwd="/")
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == json.dumps([{"city": x["city"], "amount": x["amount"], "customer": x["customer"]} for x in rows[:3]])
    r = csvq("-", "--where", "sku=P001", "--format", "json", stdin=open(tmp_path / "s.csv").read())
    assert json.loads(r.stdout) == [x for x in rows if x["product_code"] == "P001"]
    for args in [["--select", "nope"], ["--where", "ghost=1"], ["--where", "quantity"], ["--sort", "zzz"]]:
        r = csvq(tmp_path / "s.csv", *args)
        assert r.returncode == 1 and r.stderr.startswith("csvq: "), (args, r.stderr)
    r = csvq(tmp_path / "missing.csv")
    assert r.returncode == 1 and r.stderr.startswith("csvq: ")
