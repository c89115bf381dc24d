#!/bin/bash
set -e
mkdir -p /app/chunks
split -l 1000 -d -a 2 /app/server.log /app/chunks/server_
