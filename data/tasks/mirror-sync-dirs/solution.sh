#!/bin/bash
set -e
cd /app/mirror
find . -mindepth 1 -maxdepth 1 ! -name .local-state -exec rm -rf {} +
cp -a /app/source/. /app/mirror/
