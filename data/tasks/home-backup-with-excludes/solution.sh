#!/bin/bash
set -e
mkdir -p /app/backup
tar -C / --exclude='.cache' --exclude='node_modules' --exclude='*.tmp' -czpf /app/backup/home.tar.gz home
