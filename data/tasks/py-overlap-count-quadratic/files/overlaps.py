"""For every room booking, count how many OTHER bookings overlap it in time.

    python3 overlaps.py BOOKINGS.csv > counts.txt

BOOKINGS.csv has a header line then `id,start,end` rows (integers, start < end, minutes).
Bookings are half-open intervals [start, end): one ending at 10 and one starting at 10 do not overlap.
Output: one line `<id> <count>` per booking, in input order.
"""
import csv
import sys


def count_overlaps(bookings):
    counts = []
    for i, (_, s1, e1) in enumerate(bookings):
        n = 0
        for j, (_, s2, e2) in enumerate(bookings):
            if i != j and s1 <= e2 and s2 <= e1:
                n += 1
        counts.append(n)
    return counts


def main(path):
    with open(path, newline="") as f:
        rows = [(r["id"], int(r["start"]), int(r["end"])) for r in csv.DictReader(f)]
    out = []
    for (bid, _, _), n in zip(rows, count_overlaps(rows)):
        out.append(f"{bid} {n}")
    sys.stdout.write("\n".join(out) + ("\n" if out else ""))


if __name__ == "__main__":
    main(sys.argv[1])
