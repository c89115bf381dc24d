from pathlib import Path


def test_unhealthy_list():
    lines = [l.strip() for l in Path("/app/unhealthy.txt").read_text().splitlines() if l.strip()]
    assert lines == ["billing", "ledger", "mailer", "notifier", "profile", "reports"], lines
