#!/bin/bash
set -e
cd /app/legacy
for f in customers.txt products.txt readme.txt; do
  iconv -f ISO-8859-1 -t UTF-8 "$f" > "$f.tmp" && mv "$f.tmp" "$f"
done
