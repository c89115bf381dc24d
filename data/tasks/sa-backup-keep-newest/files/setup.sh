#!/bin/bash
set -e
mkdir -p /app/backups
cd /app/backups
dates="2024-01-03 2024-01-17 2023-12-30 2024-02-01 2024-01-09 2024-01-28 2023-11-15 2024-01-31 2024-01-12 2024-02-03 2023-12-01 2024-01-22"
i=0
for d in $dates; do
    echo "-- dump of $d" | gzip > "db-$d.sql.gz"
    # mtimes deliberately unrelated to the dates (files were copied from another host)
    touch -d "2024-03-$(printf %02d $((10 + (i * 7) % 13))) 04:00" "db-$d.sql.gz"
    i=$((i + 1))
done
echo "-- media" | gzip > media-2023-10-01.tar.gz
echo "Backups of the orders database. Keep the latest 4." > README.txt
touch .keep
