set -e
S=$(mktemp -d)
mkdir -p $S/etc/nginx/sites-enabled $S/etc/nginx/conf.d $S/etc/ssh $S/var/www/html $S/etc/nginx-old
echo "worker_processes 4;" > $S/etc/nginx/nginx.conf
echo "server { listen 80; root /var/www/html; }" > $S/etc/nginx/sites-enabled/default
echo "gzip on;" > $S/etc/nginx/conf.d/gzip.conf
echo "worker_processes 1;" > $S/etc/nginx-old/nginx.conf
echo "PermitRootLogin no" > $S/etc/ssh/sshd_config
echo "<h1>hi</h1>" > $S/var/www/html/index.html
tar -C $S -czf /app/server-backup.tar.gz etc var
rm -rf $S
