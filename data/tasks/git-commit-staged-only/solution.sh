#!/bin/bash
set -e
cd /app/repo
git commit -q --author="Release Bot <bot@example.com>" -m "Bump version to 2.0.0"
