export GIT_AUTHOR_NAME="Dev One" GIT_AUTHOR_EMAIL="dev1@example.com"
export GIT_COMMITTER_NAME="Dev One" GIT_COMMITTER_EMAIL="dev1@example.com"
N=0
commit() { N=$((N+1)); GIT_AUTHOR_DATE="2024-01-01T10:$(printf %02d $N):00Z" GIT_COMMITTER_DATE="2024-01-01T10:$(printf %02d $N):00Z" git commit -q "$@"; }
git config --global init.defaultBranch main
git config --global user.name "Dev One"; git config --global user.email "dev1@example.com"
mkdir -p /app/demo && cd /app/demo && git init -q
c() { echo "$1" >> log.txt; git add .; commit -m "$1" "${@:2}"; }
c "chore: initial commit"
c "feat: add parser"
c "fix(parser): handle empty input"
git tag v0.1.0
c "docs: write README"
c "feat(cli): add --verbose flag"
c "feat!: drop python 2 support"
c "fix: typo in help" -m "BREAKING CHANGE: help text changed"
git tag -a v1.0.0 -m "1.0"
c "refactor: tidy up"
c "feat: support arrays"
