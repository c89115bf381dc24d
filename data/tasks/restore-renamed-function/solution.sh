#!/bin/bash
set -e
printf '\n\ncalc_total = compute_total\n' >> /app/billing.py
