import csv
import subprocess
import tempfile
from pathlib import Path

import random
def make(seed, n):
    r = random.Random(seed)
    names = ["O'Brien, Pat", "Lee Min", "Garcia-Lopez, Ana", "Smith & Sons", "Ng", "Virtanen Aino", "Dubois, Jean-Luc", "Kowalski Piotr"]
    lines = ["H" + "PAYMENTS  20240630" + " " * 32]
    recs = []
    for i in range(n):
        pid = f"{r.randint(0, 999999):06d}"
        name = r.choice(names)
        d = f"2024{r.randint(1,6):02d}{r.randint(1,28):02d}"
        cents = r.randint(0, 9_999_999)
        sign = r.choice("++++-")
        cur = r.choice(["EUR", "USD", "GBP"])
        lines.append("D" + pid + name.ljust(20) + d + f"{cents:011d}" + sign + cur)
        recs.append((pid, name, f"{d[:4]}-{d[4:6]}-{d[6:]}", (cents if sign == "+" else -cents), cur))
    lines.append("T" + f"{n:09d}" + " " * 40)
    return "\n".join(lines) + "\n", recs


EXPECTED_MAIN = [('140891', 'Lee Min', '2024-03-04', 8312021, 'USD'), ('683244', 'Dubois, Jean-Luc', '2024-02-04', 8184876, 'USD'), ('453789', "O'Brien, Pat", '2024-06-15', 4468285, 'GBP'), ('991188', 'Lee Min', '2024-03-01', 374502, 'GBP'), ('567712', "O'Brien, Pat", '2024-04-22', 3633934, 'GBP'), ('030451', 'Smith & Sons', '2024-04-16', 9275444, 'USD'), ('242081', 'Smith & Sons', '2024-04-10', 360537, 'GBP'), ('966984', 'Lee Min', '2024-02-21', 4972605, 'GBP'), ('348856', 'Dubois, Jean-Luc', '2024-05-27', 3185149, 'USD'), ('616122', 'Kowalski Piotr', '2024-05-13', 9881818, 'USD'), ('254531', 'Dubois, Jean-Luc', '2024-04-22', 2902582, 'GBP'), ('925611', 'Virtanen Aino', '2024-01-15', 8529981, 'EUR'), ('546243', 'Dubois, Jean-Luc', '2024-03-16', 496185, 'EUR'), ('323516', 'Dubois, Jean-Luc', '2024-06-06', -2828542, 'EUR'), ('012899', 'Smith & Sons', '2024-05-28', 9199592, 'USD'), ('538728', 'Virtanen Aino', '2024-05-12', 7702952, 'GBP'), ('574615', "O'Brien, Pat", '2024-04-26', 8598322, 'GBP'), ('815160', 'Smith & Sons', '2024-04-02', 8071549, 'GBP'), ('581331', 'Smith & Sons', '2024-05-14', 8135693, 'USD'), ('362889', "O'Brien, Pat", '2024-05-18', 5555564, 'GBP'), ('029333', 'Smith & Sons', '2024-06-06', -9240156, 'EUR'), ('902833', 'Lee Min', '2024-05-26', 4283123, 'GBP'), ('073875', 'Lee Min', '2024-01-15', 244275, 'EUR'), ('281691', 'Lee Min', '2024-05-06', 5778456, 'EUR'), ('175605', 'Garcia-Lopez, Ana', '2024-03-17', 2821004, 'GBP')]


def read_csv(path):
    rows = list(csv.reader(Path(path).read_text(encoding="utf-8").splitlines()))
    assert rows[0] == ["id", "name", "date", "amount", "currency"]
    return [r for r in rows[1:] if r]


def check(rows, recs):
    assert len(rows) == len(recs)
    for row, (pid, name, date, cents, cur) in zip(rows, recs):
        assert row[0] == pid and row[1] == name and row[2] == date and row[4] == cur, (row, pid, name)
        assert len(row[3].split(".")[1]) == 2, row[3]
        assert round(float(row[3]) * 100) == cents, (row[3], cents)


def test_payments_csv():
    check(read_csv("/app/payments.csv"), EXPECTED_MAIN)


def run(text):
    d = Path(tempfile.mkdtemp())
    (d / "in.dat").write_text(text)
    r = subprocess.run(["python3", "/app/fw2csv.py", str(d / "in.dat"), str(d / "out.csv")],
                       capture_output=True, text=True, timeout=30)
    return r, d / "out.csv"


def test_converter_hidden_file():
    text, recs = make(77, 60)
    # a name that fills all 20 positions and a zero amount
    extra = "D000042" + "Abcdefghij, Klmnopqr" + "20240101" + "00000000000+EUR"
    lines = text.splitlines()
    lines.insert(3, extra)
    lines[-1] = "T" + f"{61:09d}" + " " * 40
    recs.insert(2, ("000042", "Abcdefghij, Klmnopqr", "2024-01-01", 0, "EUR"))
    r, out = run("\n".join(lines) + "\n")
    assert r.returncode == 0, r.stderr
    check(read_csv(out), recs)


def test_trailer_mismatch_rejected():
    text, recs = make(5, 10)
    good, good_out = run(text)
    assert good.returncode == 0, good.stderr
    check(read_csv(good_out), recs)
    bad_text = text.replace("T000000010", "T000000011")
    assert bad_text != text
    r, out = run(bad_text)
    assert r.returncode == 1
    assert r.stderr.strip()
    assert not out.exists()
