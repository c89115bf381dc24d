#!/bin/bash
set -e
R=/app/rootfs
grep -q '^deploy:' $R/etc/passwd || echo 'deploy:x:1500:1500:Deploy User:/home/deploy:/bin/bash' >> $R/etc/passwd
grep -q '^deploy:' $R/etc/group || echo 'deploy:x:1500:' >> $R/etc/group
grep -q '^docker:.*deploy' $R/etc/group || sed -i 's/^docker:x:998:alice$/docker:x:998:alice,deploy/' $R/etc/group
mkdir -p $R/home/deploy
chown 1500:1500 $R/home/deploy
chmod 750 $R/home/deploy
