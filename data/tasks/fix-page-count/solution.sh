#!/bin/bash
set -e
sed -i 's|return total_items // per_page|return -(-total_items // per_page)|' /app/paging.py
