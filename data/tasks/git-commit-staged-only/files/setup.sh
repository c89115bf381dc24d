export GIT_AUTHOR_NAME="Dev One" GIT_AUTHOR_EMAIL="dev1@example.com"
export GIT_COMMITTER_NAME="Dev One" GIT_COMMITTER_EMAIL="dev1@example.com"
N=0
commit() { N=$((N+1)); GIT_AUTHOR_DATE="2024-01-01T10:$(printf %02d $N):00Z" GIT_COMMITTER_DATE="2024-01-01T10:$(printf %02d $N):00Z" git commit -q "$@"; }
git config --global init.defaultBranch main
git config --global user.name "Dev One"; git config --global user.email "dev1@example.com"
mkdir -p /app/repo && cd /app/repo && git init -q
printf 'name = "gizmo"\nversion = "1.9.3"\n' > package.toml
printf '# gizmo\n\nA tool.\n' > README.md
git add .; commit -m "Initial commit"
printf 'def run():\n    return 1\n' > gizmo.py; git add .; commit -m "Add gizmo.py"
sed -i 's/1.9.3/2.0.0/' package.toml; printf '## 2.0.0\n- breaking: run() returns 1\n' > CHANGES.md
git add package.toml CHANGES.md
printf '\nWork in progress: do not commit this line.\n' >> README.md
echo "scratch" > notes.tmp
