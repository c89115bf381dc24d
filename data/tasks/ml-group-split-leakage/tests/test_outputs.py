import csv
import random
from collections import Counter

HEADER = ["user_id", "session_id", "score", "clicks", "label"]


def make_rows():
    rng = random.Random(77)
    rows = []
    for u in range(160):
        uid = f"u{rng.randint(10000, 99999)}{u}"
        risk = rng.random()
        for s in range(rng.randint(3, 12)):
            row = [uid, f"s{u}_{s}", f"{rng.gauss(risk * 10, 2):.2f}", str(rng.randint(0, 30)),
                   str(int(rng.random() < risk * 0.8))]
            rows.append(row)
            if rng.random() < 0.12:
                rows.append(list(row))
    rng.shuffle(rows)
    return rows


def read(name):
    with open(f"/app/split/{name}.csv", newline="") as f:
        rows = [[c.strip() for c in r] for r in csv.reader(f) if r]
    assert rows[0] == HEADER, rows[0]
    return [tuple(r) for r in rows[1:]]


def test_rows_partitioned_and_deduplicated():
    original = make_rows()
    assert len(original) != len({tuple(r) for r in original})  # the data really has duplicates
    got = Counter(read("train") + read("val"))
    assert got == Counter({tuple(r) for r in original})


def test_no_user_leakage():
    tr, va = {r[0] for r in read("train")}, {r[0] for r in read("val")}
    assert tr and va and not (tr & va), sorted(tr & va)[:5]
    assert tr | va == {r[0] for r in make_rows()}


def test_val_size_and_label_rate():
    data = {tuple(r) for r in make_rows()}
    users = {r[0] for r in data}
    val = read("val")
    assert len({r[0] for r in val}) == len(users) // 5
    rate = sum(r[4] == "1" for r in data) / len(data)
    vrate = sum(r[4] == "1" for r in val) / len(val)
    assert abs(vrate - rate) <= 0.05, (vrate, rate)
