#!/bin/bash
set -e
cd /app/vault
while IFS= read -r pw; do
  if openssl enc -d -aes-256-cbc -pbkdf2 -iter 100000 -in backup.tar.enc -out /tmp/try.tar -pass "pass:$pw" 2>/dev/null && tar -tf /tmp/try.tar >/dev/null 2>&1; then
    printf '%s\n' "$pw" > password.txt; break
  fi
done < candidates.txt
mkdir -p /app/restored
tar -xf /tmp/try.tar -C /app/restored
