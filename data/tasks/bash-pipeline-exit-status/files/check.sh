#!/bin/bash
# Usage: check.sh CONFIG
# Validates CONFIG, keeps a copy of the report in /app/check.log,
# and must exit non-zero when the config is invalid (the deploy pipeline relies on it).
python3 /app/validate.py "$1" | tee /app/check.log
