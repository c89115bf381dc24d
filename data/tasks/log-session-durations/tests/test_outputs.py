import csv

EXPECTED = {"alice": [2, 1802, 1271], "bob": [5, 7398, 2368], "carol": [5, 3347, 1644], "dave": [5, 6204, 2815], "erin": [2, 92, 92], "frank": [2, 808, 769]}


def rows():
    with open("/app/sessions.csv", newline="") as f:
        r = [row for row in csv.reader(f) if row]
    return [c.strip() for c in r[0]], {row[0].strip(): [c.strip() for c in row[1:]] for row in r[1:]}, [row[0] for row in r[1:]]


def test_header_and_users():
    header, data, order = rows()
    assert header == ["user", "sessions", "total_seconds", "longest_seconds"]
    assert order == sorted(EXPECTED)


def test_session_counts():
    _, data, _ = rows()
    assert {u: int(v[0]) for u, v in data.items()} == {u: v[0] for u, v in EXPECTED.items()}


def test_durations():
    _, data, _ = rows()
    got = {u: [int(float(v[1])), int(float(v[2]))] for u, v in data.items()}
    assert got == {u: v[1:] for u, v in EXPECTED.items()}
