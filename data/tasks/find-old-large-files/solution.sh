#!/bin/bash
set -e
cd /app/data
TZ=UTC find . -type f -size +512000c ! -newermt "2024-01-01 00:00:00" -printf '%P\n' | sort > /app/cleanup_list.txt
