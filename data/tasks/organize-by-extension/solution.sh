#!/bin/bash
set -e
shopt -s nullglob
for f in /app/inbox/*; do
    [ -f "$f" ] || continue
    name=$(basename "$f")
    if [[ "$name" == *.* ]]; then ext=$(echo "${name##*.}" | tr 'A-Z' 'a-z'); else ext=other; fi
    mkdir -p "/app/sorted/$ext"
    mv "$f" "/app/sorted/$ext/"
done
