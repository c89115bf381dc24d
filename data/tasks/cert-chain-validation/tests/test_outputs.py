import csv


def report():
    with open("/app/cert_report.csv", newline="") as f:
        rows = list(csv.DictReader(f))
    return {r["file"]: r["status"] for r in rows}, [r["file"] for r in rows]


def test_ok_certificates():
    d, _ = report()
    assert d["api.pem"] == "ok" and d["pay.pem"] == "ok"


def test_untrusted():
    d, _ = report()
    assert (d["checkout.pem"], d["login.pem"], d["metrics.pem"]) == ("untrusted",) * 3


def test_expired_and_hostname():
    d, _ = report()
    assert d["mail.pem"] == "expired"
    assert (d["web.pem"], d["static.pem"], d["db.pem"]) == ("ok", "hostname_mismatch", "hostname_mismatch")


def test_report_complete():
    d, order = report()
    assert order == ["api.pem", "checkout.pem", "db.pem", "login.pem", "mail.pem", "metrics.pem", "pay.pem",
                     "static.pem", "web.pem"]
    assert set(d.values()) <= {"ok", "untrusted", "expired", "hostname_mismatch"}
