#!/bin/bash
set -e
sed -i '2i set -o pipefail' /app/check.sh
