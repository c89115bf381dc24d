import csv


def test_password_found():
    assert open("/app/vault/password.txt").read().strip() == "Tr0ub4dor&3"


def test_backup_restored():
    assert open("/app/restored/etc/app/app.conf").read() == "db_host=10.1.2.3\ndb_name=orders\n"
    assert open("/app/restored/data/notes with space.txt").read() == "restore me\n"
    rows = list(csv.DictReader(open("/app/restored/data/customers.csv")))
    assert len(rows) == 50 and rows[9] == {"id": "10", "name": "customer010", "balance": "370"}
