#!/bin/bash
set -e
cd /app/backups
ls db-*.sql.gz | sort | head -n -4 | xargs -r rm -f
