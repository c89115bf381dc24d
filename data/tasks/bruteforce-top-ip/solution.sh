#!/bin/bash
grep 'Failed password' /app/logs/auth.log | grep -oE 'from [0-9.]+' | awk '{print $2}' | sort | uniq -c | sort -rn | head -1 | awk '{print $2}' > /app/attacker_ip.txt
