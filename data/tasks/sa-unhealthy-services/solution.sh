#!/bin/bash
set -e
jq -r '.services[] | select(.status != "up" or .latency_ms > 500) | .name' /app/status.json | sort > /app/unhealthy.txt
