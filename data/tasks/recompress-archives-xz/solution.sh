#!/bin/bash
cd /app/archive
: > /app/corrupt.txt
for f in *.tar.gz; do
  n=${f%.tar.gz}
  if gzip -t "$f" 2>/dev/null && gzip -dc "$f" | tar -t >/dev/null 2>&1; then
    gzip -dc "$f" | xz -c > "$n.tar.xz" && rm "$f"
  else
    echo "$f" >> /app/corrupt.txt
  fi
done
