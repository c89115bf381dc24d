#!/bin/bash
set -e
for f in /app/proc/*/status; do
    awk '/^Name:/{n=$2} /^Pid:/{p=$2} /^VmRSS:/{r=$2} END{if (r != "") print p, n, r}' "$f"
done | sort -k3,3nr | head -n 3 > /app/top_memory.txt
