set -e
mkdir -p /app/project/src/app /app/project/deploy /app/project/docs /app/project/tests
cd /app/project
cat > src/app/settings.py <<'F'
import os
DEBUG = False
AWS_ACCESS_KEY_ID = "AKIAIOSFODNN7Q2WX4ZR"
AWS_EXAMPLE_KEY = "AKIAIOSFODNN7EXAMPLE"
DATABASE_URL = "postgres://app:Xk9#pL2v@db.internal:5432/app"
CACHE_URL = os.environ.get("CACHE_URL", "redis://cache:6379/0")
F
cat > src/app/notify.py <<'F'
WEBHOOK = "https://hooks.slack.com/services/T024BE7LD/B01J2ABCD/xyzXYZ123abc"
def notify(msg):
    pass
F
cat > deploy/docker-compose.yml <<'F'
services:
  web:
    environment:
      - GITHUB_TOKEN=ghp_aB3dE5fG7hI9jK1lM3nO5pQ7rS9tU1vW3xY5
      - DB_URL=postgres://app:$DB_PASSWORD@db/app
      - BROKER=amqp://guest:password@rabbit:5672/
F
cat > deploy/id_deploy <<'F'
-----BEGIN OPENSSH PRIVATE KEY-----
b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW
-----END OPENSSH PRIVATE KEY-----
F
cat > docs/setup.md <<'F'
# Setup
Set `AWS_ACCESS_KEY_ID=AKIAXXXXXXXXXXXXXXXX` in your shell.
Use a token like ghp_xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx (create one in settings).
Connect with mysql://root:****@localhost/db
Public key only:
-----BEGIN PUBLIC KEY-----
F
cat > tests/fixtures.py <<'F'
KEY = """
-----BEGIN RSA PRIVATE KEY-----
MIIBOgIBAAJBAKj34GkxFhD90vcNLYLInFEX6Ppy1tPf9Cnzj4p4WGeKLs1Pt8Qu
-----END RSA PRIVATE KEY-----
"""
LONG = "AKIAIOSFODNN7Q2WX4ZRTOOLONG"
F
cat > .env.production <<'F'
SENTRY=https://abc:f00dfeed@sentry.io/42
MIRROR=ftp://anonymous:@mirror.example.org/pub
EC_KEY=-----BEGIN EC PRIVATE KEY-----
F
printf 'token: ghp_QWERTYUIOPasdfghjklZXCVBNM1234567890\n' > .ci-token
