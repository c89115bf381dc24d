#!/bin/bash
set -e
find /app/www -type l | while read -r l; do
  t=$(readlink "$l")
  case "$t" in
    /app/www/*|/app/www)
      rel=$(realpath -s -m --relative-to="$(dirname "$l")" "$t")
      ln -sfn "$rel" "$l" ;;
  esac
done
