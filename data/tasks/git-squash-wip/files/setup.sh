export GIT_AUTHOR_NAME="Dev One" GIT_AUTHOR_EMAIL="dev1@example.com"
export GIT_COMMITTER_NAME="Dev One" GIT_COMMITTER_EMAIL="dev1@example.com"
N=0
commit() { N=$((N+1)); GIT_AUTHOR_DATE="2024-01-01T10:$(printf %02d $N):00Z" GIT_COMMITTER_DATE="2024-01-01T10:$(printf %02d $N):00Z" git commit -q "$@"; }
git config --global init.defaultBranch main
git config --global user.name "Dev One"; git config --global user.email "dev1@example.com"
mkdir -p /app/repo && cd /app/repo && git init -q
echo "# calc" > README.md; git add .; commit -m "Initial commit"
printf 'def parse(s):\n    raise NotImplementedError\n' > parser.py; git add .; commit -m "Add parser skeleton"
printf 'def parse(s):\n    return s.split()\n' > parser.py; git add .; commit -m "WIP"
printf 'def parse(s):\n    return [int(t) if t.isdigit() else t for t in s.split()]\n' > parser.py; git add .; commit -m "wip: more"
printf 'import parser\nassert parser.parse("1 + 2") == [1, "+", 2]\n' > test_parser.py; git add .; commit -m "WIP tests"
sed -i 's/calc/calc: a tiny calculator/' README.md; git add .; commit -m "fix typo"
git checkout -q -b other HEAD~3; echo x > other.txt; git add .; commit -m "Unrelated branch"; git checkout -q main
