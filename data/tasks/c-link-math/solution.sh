#!/bin/bash
set -e
gcc -O2 -o /app/stats /app/src/stats.c -lm
