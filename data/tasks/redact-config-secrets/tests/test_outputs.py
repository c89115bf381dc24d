EXPECTED = """# payment service configuration
APP_NAME=payments
APP_PORT=8443
DB_HOST=db.internal
DB_USER=payments
DB_PASSWORD=REDACTED
STRIPE_SECRET=REDACTED
# token used by the deploy bot
DEPLOY_TOKEN=REDACTED
TOKEN_TTL_SECONDS=3600
PASSWORD_MIN_LENGTH=12
SESSION_SECRET=REDACTED
LOG_LEVEL=info

SMTP_PASSWORD=REDACTED
SECRET_SAUCE_ENABLED=true
""".splitlines()


def lines():
    return open("/app/app.redacted.conf").read().rstrip("\n").splitlines()


def test_secrets_redacted():
    text = open("/app/app.redacted.conf").read()
    for secret in ["Sup3r", "sk_live", "ghp_", "mail pass"]:
        assert secret not in text
    got = lines()
    for i in (5, 6, 8, 11, 14):
        assert got[i] == EXPECTED[i]


def test_other_lines_unchanged():
    assert lines() == EXPECTED
    assert "DB_PASSWORD=Sup3r=Secret!" in open("/app/app.conf").read()
