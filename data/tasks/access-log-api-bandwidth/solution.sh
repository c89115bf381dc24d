#!/bin/bash
awk '$7 ~ /^\/api\// && $9 ~ /^2[0-9][0-9]$/ { b = ($10 == "-") ? 0 : $10; t[$1] += b } END { for (ip in t) print ip, t[ip] }' /app/access.log | sort -k2,2nr | head -5 > /app/api_top5.txt
