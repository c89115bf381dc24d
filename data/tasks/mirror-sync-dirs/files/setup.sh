set -e
mkdir -p /app/source /app/mirror && cd /app/source
mkdir -p bin conf/sites "docs/user guide" empty-dir
printf '#!/bin/sh\necho deploy\n' > bin/deploy.sh; chmod 755 bin/deploy.sh
printf 'port=8080\nworkers=4\n' > conf/app.ini; chmod 640 conf/app.ini
printf 'server { listen 80; }\n' > conf/sites/default.conf
printf 'server { listen 81; }\n' > conf/sites/admin.conf; chmod 600 conf/sites/admin.conf
printf 'Welcome\n' > "docs/user guide/intro.md"
head -c 20000 /dev/urandom > docs/blob.bin 2>/dev/null || python3 -c "open('docs/blob.bin','wb').write(bytes(range(256))*80)"
python3 -c "open('/app/source/docs/blob.bin','wb').write(bytes((i*7)%256 for i in range(20000)))"
ln -s conf/app.ini current.ini
ln -s "docs/user guide" guide
TZ=UTC touch -d "2023-05-01 12:00:00" bin/deploy.sh conf/app.ini
TZ=UTC touch -d "2022-01-15 08:30:00" "docs/user guide/intro.md" docs/blob.bin conf/sites/default.conf conf/sites/admin.conf
# stale mirror
cd /app/mirror
mkdir -p bin conf/sites docs old-release .local-state/cache
printf '#!/bin/sh\necho old deploy\n' > bin/deploy.sh; chmod 644 bin/deploy.sh
printf 'port=8080\nworkers=4\n' > conf/app.ini; chmod 644 conf/app.ini
printf 'server { listen 80; }\n' > conf/sites/default.conf
printf 'server { listen 80; }\n' > conf/sites/legacy.conf
printf 'v1\n' > old-release/VERSION
printf 'stale\n' > docs/blob.bin
ln -s old-release current.ini
printf 'host-id=mirror-7\n' > .local-state/host.conf
printf 'cached\n' > .local-state/cache/index.db
chmod 600 .local-state/host.conf
TZ=UTC touch -d "2021-03-03 03:03:03" .local-state/host.conf .local-state/cache/index.db
