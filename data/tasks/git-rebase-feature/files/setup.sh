export GIT_AUTHOR_NAME="Dev One" GIT_AUTHOR_EMAIL="dev1@example.com"
export GIT_COMMITTER_NAME="Dev One" GIT_COMMITTER_EMAIL="dev1@example.com"
N=0
commit() { N=$((N+1)); GIT_AUTHOR_DATE="2024-01-01T10:$(printf %02d $N):00Z" GIT_COMMITTER_DATE="2024-01-01T10:$(printf %02d $N):00Z" git commit -q "$@"; }
git config --global init.defaultBranch main
git config --global user.name "Dev One"; git config --global user.email "dev1@example.com"
mkdir -p /app/repo && cd /app/repo && git init -q
cat > app.py <<'P'
GREETING = "Hello"


def greet(name):
    return f"{GREETING}, {name}!"
P
git add .; commit -m "Initial app"
git checkout -q -b feature
cat >> app.py <<'P'


def shout(name):
    return greet(name).upper()
P
git add .; commit -m "Add shout"
printf 'import app\n\nassert app.shout("bo") == app.greet("bo").upper()\nprint("ok")\n' > check_shout.py
git add .; commit -m "Add shout check"
printf '# app\n\nUse greet(), shout().\n' > README.md
git add .; commit -m "Document shout"
git checkout -q main
sed -i 's/"Hello"/"Hi"/' app.py; git add .; commit -m "Use Hi as greeting"
cat >> app.py <<'P'


def farewell(name):
    return f"Bye, {name}."
P
git add .; commit -m "Add farewell"
