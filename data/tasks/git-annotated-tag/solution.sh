#!/bin/bash
set -e
cd /app/repo
c=$(git log --format=%H --grep='^Release 1.2.0$')
git tag -a v1.2.0 -m "Version 1.2.0" "$c"
