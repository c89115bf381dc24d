#!/bin/bash
set -e
sed -i 's/^port = .*/port = 8181/; s/^greeting = .*/greeting = Welcome to staging/; s/^environment = .*/environment = staging/' /app/svc/app.ini
