#!/bin/bash
set -e
awk -F, -v OFS=, '{print $4, $3, $2}' /app/employees.csv > /app/directory.csv
