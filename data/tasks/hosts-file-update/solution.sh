#!/bin/bash
set -e
H=/app/rootfs/etc/hosts
sed -i 's/^10\.20\.0\.9\([[:space:]]\)/10.20.0.19\1/' $H
echo -e "10.20.0.15\tdb.internal db" >> $H
