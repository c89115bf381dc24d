#!/bin/bash
set -e
cd /app/service
git log -p --all | grep -o 'STRIPE_API_KEY=sk_live_[A-Za-z0-9]*' | head -1 | cut -d= -f2 > /app/leaked_key.txt
if ! git show HEAD:.gitignore 2>/dev/null | grep -qx '.env'; then
    echo '.env' >> .gitignore
    git add .gitignore
    git -c user.name=oracle -c user.email=oracle@example.com commit -q -m "Ignore .env"
fi
