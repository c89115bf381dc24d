#!/bin/bash
set -e
sed -i 's|key=lambda kv: (kv\[1\], kv\[0\])|key=lambda kv: (-kv[1], kv[0])|' /app/leaderboard.py
