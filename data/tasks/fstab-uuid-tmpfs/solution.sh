#!/bin/bash
set -e
F=/app/rootfs/etc/fstab
while read -r line; do
  dev=${line%%:*}
  uuid=$(echo "$line" | grep -o ' UUID="[^"]*"' | cut -d'"' -f2 || true)
  if [ -n "$uuid" ]; then
    sed -i "s|^$dev[[:space:]]|UUID=$uuid\t|" $F
  fi
done < /app/blkid.txt
printf 'tmpfs\t/tmp\ttmpfs\tnosuid,nodev,size=512m\t0\t0\n' >> $F
