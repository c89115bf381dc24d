#!/bin/bash
set -e
find /app/site -type d -exec chmod 755 {} +
find /app/site -type f -exec chmod 644 {} +
chmod 755 /app/site/cgi-bin/*
