#!/bin/bash
set -e
awk '$9 == 200 && $10 != "-" { s += $10 } END { printf "%d\n", s }' /app/access.log > /app/total.txt
