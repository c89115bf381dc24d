#!/bin/bash
set -e
E=/app/rootfs/etc/security
sed -i -e 's/^@web\( *\)soft\( *\)nofile\( *\)1024/@web\1soft\2nofile\38192/' -e 's/^@web\( *\)hard\( *\)nofile\( *\)1024/@web\1hard\2nofile\365536/' \
  -e 's/^build\( *\)soft\( *\)nproc\( *\)100/build\1soft\2nproc\3256/' $E/limits.conf
echo "build  hard  nproc  512" > $E/limits.d/50-build.conf
echo "postgres  -  memlock  unlimited" > $E/limits.d/60-postgres.conf
