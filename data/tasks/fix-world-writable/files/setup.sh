set -e
mkdir -p /app/www/html/uploads /app/www/cgi-bin /app/www/cache
cd /app/www
echo '<h1>hi</h1>' > html/index.html; chmod 666 html/index.html
echo 'body{}' > html/site.css; chmod 644 html/site.css
printf '#!/bin/sh\necho ok\n' > cgi-bin/status.cgi; chmod 777 cgi-bin/status.cgi
printf '#!/bin/sh\necho hi\n' > cgi-bin/hello.cgi; chmod 755 cgi-bin/hello.cgi
echo 'x' > html/uploads/a.txt; chmod 662 html/uploads/a.txt
echo 'k' > cache/k1; chmod 606 cache/k1
chmod 1777 cache; chmod 2777 html/uploads; chmod 757 cgi-bin; chmod 777 /app/www; chmod 755 html
