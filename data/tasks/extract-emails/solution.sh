#!/bin/bash
set -e
grep -oE '[A-Za-z0-9._%+-]+@([A-Za-z0-9-]+\.)+[A-Za-z]{2,}' /app/contacts.txt | LC_ALL=C sort -u > /app/emails.txt
