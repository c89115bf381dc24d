#!/bin/bash
set -e
mkdir -p /app/restore
: > /app/restore/backup.bin
for i in $(seq 1 12); do cat /app/parts/backup.bin.part-$i >> /app/restore/backup.bin; done
