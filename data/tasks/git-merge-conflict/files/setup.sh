set -e
export GIT_AUTHOR_NAME="Dana Dev" GIT_AUTHOR_EMAIL="dana@example.com" GIT_COMMITTER_NAME="Dana Dev" GIT_COMMITTER_EMAIL="dana@example.com"
n=0
commit() { n=$((n+1)); d="2024-03-$(printf %02d $n)T09:00:00+0000"; GIT_AUTHOR_DATE=$d GIT_COMMITTER_DATE=$d git commit -q -m "$1"; }
mkdir -p /app/calc && cd /app/calc && git init -q -b main
cat > converter.py <<'P'
"""Unit conversions."""

KM_PER_MILE = 1.609344
LB_PER_KG = 2.2046226218


def km_to_miles(km):
    return km / KM_PER_MILE
P
printf '# Changelog\n\n## Unreleased\n\n## 0.1.0\n- km_to_miles\n' > CHANGELOG.md
git add . && commit "Initial converter"
git checkout -q -b feature/miles
cat >> converter.py <<'P'


def miles_to_km(miles):
    """Miles to kilometres, rounded to 3 decimals."""
    return round(miles * KM_PER_MILE, 3)
P
sed -i 's/^## Unreleased$/## Unreleased\n- miles_to_km/' CHANGELOG.md
git add . && commit "Add miles_to_km"
git checkout -q main
sed -i 's|    return km / KM_PER_MILE|    return round(km / KM_PER_MILE, 3)|' converter.py
cat >> converter.py <<'P'


def kg_to_lb(kg):
    """Kilograms to pounds, rounded to 3 decimals."""
    return round(kg * LB_PER_KG, 3)
P
sed -i 's/^## Unreleased$/## Unreleased\n- kg_to_lb/' CHANGELOG.md
git add . && commit "Add kg_to_lb and round km_to_miles"
git merge --no-edit feature/miles >/dev/null 2>&1 || true
git status --short
