#!/bin/bash
set -e
o='(25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9][0-9]|[0-9])'
printf '%s\n' "^$o\.$o\.$o\.$o\$" > /app/ipv4.ere
grep -E -x -f /app/ipv4.ere /app/examples.txt > /app/valid.txt
