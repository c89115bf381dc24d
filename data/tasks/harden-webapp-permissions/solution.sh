#!/bin/bash
set -e
cd /app/site
find . \( -name '*~' -o -name '*.bak' -o -name '*.swp' \) -type f -delete
chown -R root:root .
chmod -R u-s,g-s,-t .
find . -type d -exec chmod 0755 {} +
find . -type f -exec chmod 0644 {} +
chown root:www-data bin/* config/secrets.env
chmod 0750 bin/*
chmod 0640 config/secrets.env
chown -R www-data:www-data data
find data -type d -exec chmod 0770 {} +
find data -type f -exec chmod 0660 {} +
