import csv

EXPECTED = [["ORD-1000", "2024-05-28", "Acme, Inc.", "20.28"], ["ORD-1001", "2024-06-06", "Umbrella Corp", "344.37"], ["ORD-1002", "2024-07-02", "Globex", "654.73"], ["ORD-1003", "2024-05-16", "Umbrella Corp", "17.60"], ["ORD-1004", "2024-11-13", "Umbrella Corp", "811.98"], ["ORD-1005", "2024-02-24", "Acme, Inc.", "883.24"], ["ORD-1006", "2024-09-12", "Umbrella Corp", "22.52"], ["ORD-1007", "2024-11-17", "Wayne, Enterprises", "391.01"], ["ORD-1008", "2024-01-30", "Globex", "705.88"], ["ORD-1009", "2024-10-28", "Initech", "593.83"], ["ORD-1010", "2024-11-13", "Globex", "873.81"], ["ORD-1011", "2024-07-04", "Stark Industries", "685.01"], ["ORD-1012", "2024-07-07", "Stark Industries", "256.74"], ["ORD-1013", "2024-06-09", "Stark Industries", "81.73"], ["ORD-1014", "2024-08-30", "Globex", "647.53"], ["ORD-1015", "2024-10-29", "Umbrella Corp", "609.77"], ["ORD-1016", "2024-03-24", "Globex", "720.11"], ["ORD-1017", "2024-09-30", "Initech", "607.66"], ["ORD-1018", "2024-09-23", "Globex", "526.16"], ["ORD-1019", "2024-02-12", "Acme, Inc.", "386.40"], ["ORD-1020", "2024-10-17", "Initech", "846.38"], ["ORD-1021", "2024-05-23", "Stark Industries", "301.07"], ["ORD-1022", "2024-07-08", "Initech", "490.23"], ["ORD-1023", "2024-08-20", "Stark Industries", "200.37"], ["ORD-1024", "2024-03-17", "Acme, Inc.", "559.59"], ["ORD-1025", "2024-03-02", "Wayne, Enterprises", "716.60"], ["ORD-1026", "2024-09-09", "Globex", "298.79"], ["ORD-1027", "2024-03-13", "Wayne, Enterprises", "535.46"], ["ORD-1028", "2024-07-15", "Globex", "407.14"], ["ORD-1029", "2024-01-18", "Acme, Inc.", "569.61"]]


def rows():
    with open("/app/orders_clean.csv", newline="") as f:
        return list(csv.reader(f))


def test_header_and_row_count():
    r = rows()
    assert r[0] == ["order_id", "order_date", "customer", "amount"]
    assert len([x for x in r[1:] if x]) == len(EXPECTED)


def test_dates_iso():
    got = [(x[0], x[1]) for x in rows()[1:] if x]
    assert got == [(e[0], e[1]) for e in EXPECTED]


def test_other_fields_unchanged():
    got = [[x[0], x[2], x[3]] for x in rows()[1:] if x]
    assert got == [[e[0], e[2], e[3]] for e in EXPECTED]
