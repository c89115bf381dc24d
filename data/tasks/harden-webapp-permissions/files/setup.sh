set -e
mkdir -p /app/site/bin /app/site/config /app/site/public/css /app/site/data/uploads/2024 /app/site/lib
cd /app/site
printf '#!/bin/sh\necho start\n' > bin/start.sh
printf '#!/bin/sh\necho worker\n' > bin/worker
printf 'DB_PASSWORD=s3cr3t\n' > config/secrets.env
printf 'port=8000\n' > config/app.ini
printf 'port=8000\nDB_PASSWORD=old\n' > config/app.ini.bak
printf '<h1>home</h1>\n' > public/index.html
printf 'body{}\n' > public/css/site.css
printf 'body{color:red}\n' > public/css/site.css~
printf 'def f(): pass\n' > lib/util.py
printf 'swap\n' > lib/.util.py.swp
printf 'upload\n' > data/uploads/2024/a.png
printf 'db\n' > data/app.sqlite
chmod 777 bin/start.sh; chmod 4755 bin/worker; chmod 666 config/secrets.env; chmod 600 config/app.ini
chmod 2775 public; chmod 1777 data/uploads; chmod 755 data/app.sqlite; chmod 700 lib/util.py
chown -R 1000:1000 lib; chown nobody data/uploads/2024/a.png
