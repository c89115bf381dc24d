export GIT_AUTHOR_NAME="Dev One" GIT_AUTHOR_EMAIL="dev1@example.com"
export GIT_COMMITTER_NAME="Dev One" GIT_COMMITTER_EMAIL="dev1@example.com"
N=0
commit() { N=$((N+1)); GIT_AUTHOR_DATE="2024-01-01T10:$(printf %02d $N):00Z" GIT_COMMITTER_DATE="2024-01-01T10:$(printf %02d $N):00Z" git commit -q "$@"; }
git config --global init.defaultBranch main
git config --global user.name "Dev One"; git config --global user.email "dev1@example.com"
mkdir -p /app/repo && cd /app/repo && git init -q
echo "# service" > README.md; git add .; commit -m "chore: initial commit"
