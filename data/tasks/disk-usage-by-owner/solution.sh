#!/bin/bash
find /app/share -type f -printf '%i %u %s\n' | sort -u -k1,1n | awk '{t[$2]+=$3} END {for (u in t) print u, t[u]}' | sort -k2,2nr > /app/usage_by_owner.txt
