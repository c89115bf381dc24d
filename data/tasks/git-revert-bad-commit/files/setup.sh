set -e
export GIT_AUTHOR_NAME="Dana Dev" GIT_AUTHOR_EMAIL="dana@example.com" GIT_COMMITTER_NAME="Dana Dev" GIT_COMMITTER_EMAIL="dana@example.com"
n=0
commit() { n=$((n+1)); d="2024-03-$(printf %02d $n)T09:00:00+0000"; GIT_AUTHOR_DATE=$d GIT_COMMITTER_DATE=$d git commit -q -m "$1"; }
mkdir -p /app/shop && cd /app/shop && git init -q -b main
cat > pricing.py <<'P'
DISCOUNT_RATE = 0.10
TAX_RATE = 0.20


def total(subtotal, member=False):
    if member:
        subtotal = subtotal * (1 - DISCOUNT_RATE)
    return round(subtotal * (1 + TAX_RATE), 2)
P
printf 'def shipping(weight_kg):\n    return 4.99\n' > shipping.py
git add . && commit "Add pricing module"
printf '# Shop\n\nPricing and shipping helpers.\n' > README.md && git add . && commit "Add README"
sed -i 's/DISCOUNT_RATE = 0.10/DISCOUNT_RATE = 0.50/; s/TAX_RATE = 0.20/TAX_RATE = 0.02/' pricing.py
git add . && commit "Change discount rate"
printf 'def shipping(weight_kg):\n    return 4.99 if weight_kg < 5 else 9.99\n' > shipping.py
git add . && commit "Heavier parcels cost more to ship"
printf '# Shop\n\nPricing and shipping helpers.\n\nRun `python3 -c "import pricing"` to smoke-test.\n' > README.md && git add . && commit "Document smoke test"
