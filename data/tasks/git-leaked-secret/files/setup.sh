set -e
export GIT_AUTHOR_NAME="Dana Dev" GIT_AUTHOR_EMAIL="dana@example.com" GIT_COMMITTER_NAME="Dana Dev" GIT_COMMITTER_EMAIL="dana@example.com"
n=0
commit() { n=$((n+1)); d="2024-03-$(printf %02d $n)T09:00:00+0000"; GIT_AUTHOR_DATE=$d GIT_COMMITTER_DATE=$d git commit -q -m "$1"; }
mkdir -p /app/service && cd /app/service && git init -q -b main
printf '# payments service\n\nTests use STRIPE_API_KEY=sk_test_0000000000000000 (a dummy key).\n' > README.md
printf 'import os\nKEY = os.environ["STRIPE_API_KEY"]\n' > app.py
git add . && commit "Initial service"
printf 'DEBUG=1\nSTRIPE_API_KEY=sk_live_9fQ2xT7mLp4Rz8Kw\nDB_URL=postgres://localhost/pay\n' > .env
git add . && commit "Local config"
printf 'import os\nKEY = os.environ["STRIPE_API_KEY"]\nTIMEOUT = 30\n' > app.py && git add . && commit "Add timeout"
git rm -q --cached .env && rm .env && commit "Remove env file"
printf 'def charge(amount):\n    return {"amount": amount}\n' > billing.py && git add . && commit "Add billing stub"
