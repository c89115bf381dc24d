export GIT_AUTHOR_NAME="Dev One" GIT_AUTHOR_EMAIL="dev1@example.com"
export GIT_COMMITTER_NAME="Dev One" GIT_COMMITTER_EMAIL="dev1@example.com"
N=0
commit() { N=$((N+1)); GIT_AUTHOR_DATE="2024-01-01T10:$(printf %02d $N):00Z" GIT_COMMITTER_DATE="2024-01-01T10:$(printf %02d $N):00Z" git commit -q "$@"; }
git config --global init.defaultBranch main
git config --global user.name "Dev One"; git config --global user.email "dev1@example.com"
mkdir -p /app/repo && cd /app/repo && git init -q
printf '# Toolz\n\nA colection of tools.\n' > README.md
printf 'def main():\n    pass\n' > app.py
git add .; commit -m "Initial commit"
printf '# Toolz\n\nA collection of tools.\n' > README.md
printf 'import json\n\n\ndef load_config(path):\n    with open(path) as f:\n        return json.load(f)\n' > config.py
git add .; commit -m "Add config loader and fix README typo"
printf 'import sys\n\nfrom config import load_config\n\n\ndef main():\n    print(load_config(sys.argv[1]))\n' > app.py
git add .; commit -m "Add CLI"
printf '{"debug": true}\n' > example.json
git add .; commit -m "Add example config"
