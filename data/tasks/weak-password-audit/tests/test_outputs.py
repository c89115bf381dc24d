import csv
import random


def expected():
    r = random.Random(5)
    words = sorted({"".join(r.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(r.randint(5, 9))) for _ in range(3000)})
    words[:8] = ["password", "dragon", "monkey", "letmein", "sunshine", "qwerty", "football", "princess"]
    return {"alice": "Sunshine", "bob": "dragon7", "dave": words[1234], "erin": "Monkey0", "grace": words[2999] + "3",
            "mallory": "qwerty", "peggy": words[42].capitalize()}


def load():
    rows = list(csv.DictReader(open("/app/weak_users.csv")))
    return {r["user"]: r["password"] for r in rows}, [r["user"] for r in rows]


def test_weak_users_found():
    got, order = load()
    exp = expected()
    for u, p in exp.items():
        assert got.get(u) == p, u
    assert order == sorted(order)


def test_no_false_positives():
    got, _ = load()
    assert set(got) == set(expected())
