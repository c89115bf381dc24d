#!/bin/bash
set -e
awk '!seen[$0]++' /app/contacts.csv > /app/contacts_unique.csv
