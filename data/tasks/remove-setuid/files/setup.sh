set -e
R=/app/rootfs
mkdir -p $R/usr/bin $R/usr/local/bin $R/opt/tools/bin $R/usr/sbin $R/etc
for f in usr/bin/passwd usr/bin/ls usr/bin/cat usr/local/bin/backup-helper usr/local/bin/netdiag opt/tools/bin/runner usr/sbin/cron usr/bin/wall usr/bin/vim.tiny; do
    printf '#!/bin/sh\necho %s\n' "$(basename $f)" > $R/$f; chmod 755 $R/$f
done
printf 'root:x:0:0:root:/root:/bin/bash\n' > $R/etc/passwd; chmod 644 $R/etc/passwd
chmod 4755 $R/usr/bin/passwd
chmod 4755 $R/usr/local/bin/backup-helper
chmod 4750 $R/opt/tools/bin/runner
chmod 2755 $R/usr/bin/wall
chmod 6755 $R/usr/local/bin/netdiag
chmod 4711 $R/usr/bin/vim.tiny
mkdir -p $R/tmp && chmod 1777 $R/tmp
mkdir -p $R/srv/shared && chmod 2775 $R/srv/shared
