#!/bin/bash
# Starts the inventory service in the foreground.
cd "$(dirname "$0")"
exec python3 app.py --config config.ini.example
