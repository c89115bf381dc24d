#!/bin/bash
set -e
cd /app/calc
[ -f .git/MERGE_HEAD ] || exit 0
cat > converter.py <<'P'
"""Unit conversions."""

KM_PER_MILE = 1.609344
LB_PER_KG = 2.2046226218


def km_to_miles(km):
    return round(km / KM_PER_MILE, 3)


def kg_to_lb(kg):
    """Kilograms to pounds, rounded to 3 decimals."""
    return round(kg * LB_PER_KG, 3)


def miles_to_km(miles):
    """Miles to kilometres, rounded to 3 decimals."""
    return round(miles * KM_PER_MILE, 3)
P
printf '# Changelog\n\n## Unreleased\n- kg_to_lb\n- miles_to_km\n\n## 0.1.0\n- km_to_miles\n' > CHANGELOG.md
git add converter.py CHANGELOG.md
git -c user.name=oracle -c user.email=oracle@example.com commit -q --no-edit
