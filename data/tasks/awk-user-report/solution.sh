#!/bin/bash
set -e
cat > /app/report.awk <<'AWK'
/^[ \t]*$/ || /^#/ { next }
NF != 4 || $4 !~ /^[0-9]+$/ { bad++; next }
{
    u = $2
    if (!(u in cnt)) order[++n] = u
    cnt[u]++; tot[u] += $4
    if (!(u in mx) || $4 + 0 > mx[u]) mx[u] = $4 + 0
    all++; sum += $4
}
END {
    for (i = 1; i <= n; i++) { u = order[i]; printf "%s %d %d %.1f %d\n", u, cnt[u], tot[u], tot[u] / cnt[u], mx[u] }
    printf "TOTAL %d %d\n", all, sum
    printf "INVALID %d\n", bad
}
AWK
