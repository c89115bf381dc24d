#!/bin/bash
set -e
sed -i 's/| sort |/| sort -t. -k1.2,1n -k2,2n -k3,3n |/' /app/latest.sh
