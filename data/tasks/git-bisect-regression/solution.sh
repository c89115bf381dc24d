#!/bin/bash
set -e
cd /app/mathlib
if [ ! -s /app/first_bad_commit.txt ]; then
    good=$(git rev-list --max-parents=0 HEAD)
    git bisect start HEAD "$good" >/dev/null
    git bisect run python3 check.py > /tmp/bisect.log 2>&1
    git rev-parse refs/bisect/bad > /app/first_bad_commit.txt
    git bisect reset >/dev/null 2>&1
fi
git checkout -q main
if ! python3 check.py >/dev/null; then
    sed -i 's/    while i \* i < n:/    while i * i <= n:/' mathlib.py
    git -c user.name=oracle -c user.email=oracle@example.com commit -q -am "Fix is_prime loop bound"
fi
