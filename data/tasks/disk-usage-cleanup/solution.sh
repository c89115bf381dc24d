#!/bin/bash
set -e
find /app/var -type f \( -name core -o -regex '.*/core\.[0-9]+' \) -delete
find /app/var -type f -printf '%s %p\n' | sort -rn | head -n 5 > /app/largest.txt
