set -e
W=/app/www
mkdir -p $W/releases/2.1/assets $W/releases/2.2/assets $W/shared/uploads $W/sites/blog $W/sites/shop/static
echo "app 2.1" > $W/releases/2.1/index.php; echo "app 2.2" > $W/releases/2.2/index.php
echo "css" > $W/releases/2.2/assets/site.css; echo "logo" > $W/shared/uploads/logo.png
echo "env" > $W/shared/.env
ln -s /app/www/releases/2.2 $W/current
ln -s /app/www/shared/uploads $W/releases/2.2/uploads
ln -s /app/www/shared/.env $W/releases/2.2/.env
ln -s /app/www/current/index.php $W/sites/blog/index.php
ln -s /app/www/releases/2.2/assets/site.css $W/sites/shop/static/style.css
ln -s ../../shared/uploads $W/sites/shop/uploads
ln -s /etc/hostname $W/shared/hostname
ln -s /app/www/releases/9.9 $W/broken-next
