import random


def raw_day(seed, n):
    r = random.Random(seed)
    lines = ["order_id,timestamp,store,amount,currency"]
    ids = []
    for i in range(n):
        oid = f"O{r.randint(10000, 99999)}"
        if ids and r.random() < 0.08:
            oid = r.choice(ids)  # duplicate order id within the day
        ids.append(oid)
        store = r.choice(["berlin", "paris", "oslo", "rome", ""]) if r.random() < 0.1 else r.choice(["berlin", "paris", "oslo", "rome"])
        amt = f"{r.uniform(1, 400):.2f}"
        if r.random() < 0.05:
            amt = r.choice(["", "n/a", "12,50"])
        cur = r.choice(["EUR", "EUR", "USD", "NOK", "GBP"])
        lines.append(f"{oid},2024-04-01T{r.randint(8, 20):02d}:{r.randint(0, 59):02d}:00,{store},{amt},{cur}")
    return "\n".join(lines) + "\n"




def clean(text, rates):
    out, seen = [], set()
    for r in csv.DictReader(io.StringIO(text)):
        if None in r or None in r.values() or not r["store"].strip() or r["order_id"] in seen:
            continue
        try:
            amt = float(r["amount"])
        except ValueError:
            continue
        if r["currency"] not in rates:
            continue
        seen.add(r["order_id"])
        out.append((r["order_id"], r["store"], round(amt * rates[r["currency"]] + 1e-9, 2)))
    return out


def aggregate(days):
    """days: {date: clean rows} -> (daily_totals rows, report dict)."""
    totals = []
    for d in sorted(days):
        per = {}
        for _, store, eur in days[d]:
            c, s = per.get(store, (0, 0.0))
            per[store] = (c + 1, s + eur)
        for store in sorted(per):
            totals.append((d, store, per[store][0], round(per[store][1], 2)))
    by_store = {}
    for _, store, _, rev in totals:
        by_store[store] = by_store.get(store, 0.0) + rev
    report = {"days": len(days), "orders": sum(t[2] for t in totals),
              "revenue_eur": round(sum(t[3] for t in totals), 2),
              "top_store": max(sorted(by_store), key=lambda s: by_store[s]) if by_store else None}
    return totals, report


import csv
import io
import json
import os
import shutil
import subprocess
import time
from pathlib import Path

P = Path("/app/pipeline")
RATES_TEXT = "currency,eur_rate\nEUR,1.0\nUSD,0.92\nGBP,1.17\nNOK,0.086\n"
RATES = {"EUR": 1.0, "USD": 0.92, "GBP": 1.17, "NOK": 0.086}
GIVEN = {"2024-04-01": (100, 40), "2024-04-02": (101, 40), "2024-04-03": (102, 40)}


def make(*args):
    p = subprocess.run(["make", "-C", str(P), *args], capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stdout + p.stderr
    return p


def set_raw(days):
    """days: {date: (seed, n)} -> write exactly these raw files; start from an empty build."""
    assert (P / "Makefile").is_file()
    (P / "rates.csv").write_text(RATES_TEXT)
    shutil.rmtree(P / "build", ignore_errors=True)
    raw = P / "raw"
    raw.mkdir(exist_ok=True)
    for f in raw.glob("*.csv"):
        f.unlink()
    texts = {}
    for d, (seed, n) in days.items():
        texts[d] = raw_day(seed, n)
        (raw / f"sales_{d}.csv").write_text(texts[d])
    return texts


def check_outputs(texts):
    days = {d: clean(t, RATES) for d, t in texts.items()}
    for d, rows in days.items():
        got = list(csv.DictReader((P / "build" / "clean" / f"sales_{d}.csv").read_text().splitlines()))
        assert [(r["order_id"], r["store"]) for r in got] == [(o, s) for o, s, _ in rows], d
        for g, (_, _, eur) in zip(got, rows):
            assert abs(float(g["amount_eur"]) - eur) <= 0.011, (d, g, eur)
    totals, report = aggregate(days)
    got = list(csv.DictReader((P / "build" / "daily_totals.csv").read_text().splitlines()))
    assert [(r["date"], r["store"], int(r["orders"])) for r in got] == [t[:3] for t in totals]
    for g, t in zip(got, totals):
        assert abs(float(g["revenue_eur"]) - t[3]) <= 0.05, (g, t)
    rep = json.loads((P / "build" / "report.json").read_text())
    assert rep["days"] == report["days"] and rep["orders"] == report["orders"], rep
    assert rep["top_store"] == report["top_store"], rep
    assert abs(float(rep["revenue_eur"]) - report["revenue_eur"]) <= 0.1, rep


def mtimes():
    return {str(f.relative_to(P)): f.stat().st_mtime_ns for f in (P / "build").rglob("*") if f.is_file()}


def test_outputs_for_given_raw_files():
    texts = set_raw(GIVEN)  # the original raw files, rewritten unchanged
    make()
    check_outputs(texts)


def test_new_raw_files_picked_up():
    days = {"2024-05-10": (7, 60), "2024-05-11": (8, 25), "2024-05-13": (9, 80), "2024-06-01": (10, 5)}
    texts = set_raw(days)
    make()
    check_outputs(texts)
    assert sorted(p.name for p in (P / "build" / "clean").glob("*.csv")) == sorted(f"sales_{d}.csv" for d in days)


def age_everything(seconds_ago_inputs=200, seconds_ago_outputs=100):
    """Make every source file and folder (raw files, raw/, rates.csv, Makefile, scripts: everything
    outside build/) older than every build output, so that only what a test changes afterwards is
    out of date (a Makefile may legitimately depend on the raw/ folder to notice removed days)."""
    now = time.time()
    build = P / "build"
    for f in [P, *P.rglob("*")]:
        if f != build and build not in f.parents and (f.is_file() or f.is_dir()):
            os.utime(f, (now - seconds_ago_inputs, now - seconds_ago_inputs))
    for f in build.rglob("*"):
        if f.is_file():
            os.utime(f, (now - seconds_ago_outputs, now - seconds_ago_outputs))


def test_incremental_rebuilds():
    days = {"2024-07-01": (21, 30), "2024-07-02": (22, 30), "2024-07-03": (23, 30)}
    texts = set_raw(days)
    make()
    age_everything()
    before = mtimes()
    make()
    assert mtimes() == before, "make rebuilt something although nothing changed"
    # change one day's raw file
    texts["2024-07-02"] = raw_day(99, 45)
    (P / "raw" / "sales_2024-07-02.csv").write_text(texts["2024-07-02"])
    make()
    after = mtimes()
    assert after["build/clean/sales_2024-07-02.csv"] != before["build/clean/sales_2024-07-02.csv"]
    assert after["build/clean/sales_2024-07-01.csv"] == before["build/clean/sales_2024-07-01.csv"]
    assert after["build/clean/sales_2024-07-03.csv"] == before["build/clean/sales_2024-07-03.csv"]
    check_outputs(texts)
    # a newer rates.csv rebuilds every clean file
    age_everything()
    before = mtimes()
    (P / "rates.csv").write_text(RATES_TEXT)
    make()
    after = mtimes()
    for d in days:
        name = f"build/clean/sales_{d}.csv"
        assert after[name] != before[name], name
    check_outputs(texts)


def test_make_clean():
    texts = set_raw(GIVEN)
    make()
    make("clean")
    assert not (P / "build").exists()
    assert (P / "Makefile").is_file() and (P / "rates.csv").is_file()
    assert len(list((P / "raw").glob("*.csv"))) == 3
    make()
    check_outputs(texts)
