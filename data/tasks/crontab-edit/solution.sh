#!/bin/bash
set -e
f=/app/etc/crontab
sed -i 's|^45 3    \* \* 0   root    /app/scripts/cleanup.sh|#45 3    * * 0   root    /app/scripts/cleanup.sh|' "$f"
sed -i 's|^0  6    \* \* \*   www     /app/scripts/report.sh|*/15 *  * * *   www     /app/scripts/report.sh|' "$f"
grep -q '^30 2 .*/app/scripts/backup.sh' "$f" || echo '30 2    * * *   root    /app/scripts/backup.sh' >> "$f"
