#!/bin/bash
set -e
cd /app
# the right end index is n - 1, and an empty line must not underflow
sed -i 's/size_t i = 0, j = n;/size_t i = 0, j = n ? n - 1 : 0;/' rev.c
make -s
