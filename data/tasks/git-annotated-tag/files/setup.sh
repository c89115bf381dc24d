export GIT_AUTHOR_NAME="Dev One" GIT_AUTHOR_EMAIL="dev1@example.com"
export GIT_COMMITTER_NAME="Dev One" GIT_COMMITTER_EMAIL="dev1@example.com"
N=0
commit() { N=$((N+1)); GIT_AUTHOR_DATE="2024-01-01T10:$(printf %02d $N):00Z" GIT_COMMITTER_DATE="2024-01-01T10:$(printf %02d $N):00Z" git commit -q "$@"; }
git config --global init.defaultBranch main
git config --global user.name "Dev One"; git config --global user.email "dev1@example.com"
mkdir -p /app/repo && cd /app/repo && git init -q
echo "# widget" > README.md; git add .; commit -m "Initial commit"
for i in 1 2 3; do echo "feature $i" >> features.txt; git add .; commit -m "Add feature $i"; done
echo "1.2.0" > VERSION; git add .; commit -m "Release 1.2.0"
echo "feature 4" >> features.txt; git add .; commit -m "Add feature 4"
echo "1.3.0-dev" > VERSION; git add .; commit -m "Start 1.3.0 development"
git tag v1.1.0 HEAD~4
