#!/bin/bash
set -e
awk -F, 'NR==1{print "city,temp_c"; next} {printf "%s,%.1f\n", $1, ($2-32)*5/9}' /app/temps.csv > /app/temps_c.csv
