#!/bin/bash
set -e
cd /app/repo
git checkout -q feature
if ! git rebase main >/dev/null 2>&1; then
    cat > app.py <<'P'
GREETING = "Hi"


def greet(name):
    return f"{GREETING}, {name}!"


def farewell(name):
    return f"Bye, {name}."


def shout(name):
    return greet(name).upper()
P
    git add app.py
    GIT_EDITOR=true git rebase --continue >/dev/null
fi
