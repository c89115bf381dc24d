#!/bin/bash
set -e
sed -i 's|return int(os.environ\["APP_PORT"\])|return int(os.environ.get("APP_PORT") or 8080)|' /app/app_config.py
