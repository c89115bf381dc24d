#!/bin/bash
set -e
mkdir -p /app/restored
for f in /app/backups/backup-0-full.tar.gz /app/backups/backup-1-incr.tar.gz /app/backups/backup-2-incr.tar.gz; do
  tar -xzf "$f" -g /dev/null -C /app/restored
done
