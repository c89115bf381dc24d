#!/bin/bash
set -e
awk '{c[int($1/10)]++} END {print "bin,count"; for (b = 0; b < 10; b++) printf "%d-%d,%d\n", b*10, b*10+9, c[b]+0}' /app/ages.txt > /app/histogram.csv
