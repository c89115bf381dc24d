#!/bin/bash
set -e
mkdir -p /app/restore
tar -xzf /app/server-backup.tar.gz -C /app/restore etc/nginx
