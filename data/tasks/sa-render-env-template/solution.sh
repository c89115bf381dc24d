#!/bin/bash
set -e
mkdir -p /app/rendered
cp /app/templates/worker.conf.tmpl /app/rendered/worker.conf
grep -v '^#' /app/env/production.env | while IFS='=' read -r k v; do
    [ -n "$k" ] && sed -i "s|{{$k}}|$v|g" /app/rendered/worker.conf
done
