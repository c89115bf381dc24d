#!/bin/bash
set -e
cd /app/photos
for f in *; do
  lower=$(printf '%s' "$f" | tr 'A-Z' 'a-z')
  case "$lower" in
    *.jpg|*.jpeg) new="${f%.*}.jpg"; [ "$f" = "$new" ] || mv -- "$f" "$new" ;;
  esac
done
