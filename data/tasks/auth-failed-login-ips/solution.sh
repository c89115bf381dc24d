#!/bin/bash
grep 'Failed password' /app/auth.log | awk '{for(i=1;i<=NF;i++) if($i=="from") print $(i+1)}' | sort -u > /app/failed_ips.txt
