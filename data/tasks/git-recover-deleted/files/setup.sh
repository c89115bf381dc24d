set -e
export GIT_AUTHOR_NAME="Dana Dev" GIT_AUTHOR_EMAIL="dana@example.com" GIT_COMMITTER_NAME="Dana Dev" GIT_COMMITTER_EMAIL="dana@example.com"
n=0
commit() { n=$((n+1)); d="2024-03-$(printf %02d $n)T09:00:00+0000"; GIT_AUTHOR_DATE=$d GIT_COMMITTER_DATE=$d git commit -q -m "$1"; }
mkdir -p /app/repo && cd /app/repo && git init -q -b main
mkdir -p config src
printf 'print("service")\n' > src/main.py
printf '# service\n' > README.md
git add . && commit "Initial commit"
cat > config/settings.yaml <<'Y'
server:
  port: 8443
  workers: 4
database:
  host: db.internal
  name: orders
  pool_size: 12
feature_flags:
  new_checkout: true
Y
git add . && commit "Add service settings"
printf 'server:\n  port: 8080\n' > config/defaults.yaml
git add . && commit "Add defaults"
sed -i 's/pool_size: 12/pool_size: 16/' config/settings.yaml
git add . && commit "Tune database pool"
git rm -q config/settings.yaml && printf 'tmp\n' > scratch.txt && git add . && commit "Clean up old files"
git rm -q scratch.txt && commit "Remove scratch file"
printf 'print("service v2")\n' > src/main.py && git add . && commit "Bump service version"
