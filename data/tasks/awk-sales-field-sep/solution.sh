#!/bin/bash
set -e
sed -i 's/FS = " "/FS = ","/' /app/region_totals.awk
