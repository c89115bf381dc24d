import json
import subprocess


def run(tmp_path, orders):
    p = tmp_path / "o.jsonl"
    p.write_text("".join(json.dumps(o) + "\n" for o in orders))
    r = subprocess.run(["python3", "/app/report.py", str(p)], capture_output=True, text=True, timeout=30)
    assert r.returncode == 0, r.stderr
    return r.stdout.splitlines()


def test_missing_qty(tmp_path):
    orders = [{"customer": "zed", "price": 10.0, "qty": 3},
              {"customer": "amy", "price": 4.5},
              {"customer": "amy", "price": 2.0, "qty": 2, "status": "paid"},
              {"customer": "zed", "price": 1.0}]
    assert run(tmp_path, orders) == ["amy 2 4.25", "zed 2 15.50"]


def test_all_refunded(tmp_path):
    orders = [{"customer": "bo", "price": 9.99, "qty": 1, "status": "refunded"},
              {"customer": "cy", "price": 3.0, "status": "refunded"},
              {"customer": "cy", "price": 5.0, "qty": 2},
              {"customer": "al", "price": 1.25, "qty": 4}]
    assert run(tmp_path, orders) == ["al 1 5.00", "bo 0 n/a", "cy 1 10.00"]
