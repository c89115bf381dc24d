#!/bin/bash
set -e
jq -r '.orders[].customer.address.city' /app/orders.json | sort -u > /app/cities.txt
