#!/bin/bash
set -e
cd /app
sed -i 's/    char c;/    int c;/' adler.c
sed -i 's/fopen(argv\[i\], "r")/fopen(argv[i], "rb")/' adler.c
make -B
