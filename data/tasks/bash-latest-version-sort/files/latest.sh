#!/bin/bash
# Usage: latest.sh TAGS_FILE
# Prints the newest release tag (form vMAJOR.MINOR.PATCH) listed in TAGS_FILE; other lines are ignored.
grep -E '^v[0-9]+\.[0-9]+\.[0-9]+$' "$1" | sort | tail -n 1
