#!/bin/bash
set -e
cd /app/shop
if ! git show HEAD:pricing.py | grep -q 'DISCOUNT_RATE = 0.10'; then
    bad=$(git log --format=%H --grep='^Change discount rate$' -1)
    git -c user.name=oracle -c user.email=oracle@example.com revert --no-edit "$bad"
fi
