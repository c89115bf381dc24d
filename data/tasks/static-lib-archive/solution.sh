#!/bin/bash
set -e
mkdir -p /app/lib
ar rcs /app/lib/libgeom.a /app/obj/*.o
