#!/usr/bin/awk -f
# Usage: awk -f region_totals.awk sales.csv
# sales.csv: header line, then  date,region,product,amount
# Prints one line per region: "<region> <total amount with 2 decimals>"
BEGIN { FS = " " }
NR > 1 { total[$2] += $4 }
END { for (r in total) printf "%s %.2f\n", r, total[r] }
