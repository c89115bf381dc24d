set -e
S=/app/site
mkdir -p $S/css $S/img/icons $S/cgi-bin $S/docs/api
echo "<html></html>" > $S/index.html; echo "body{}" > $S/css/main.css; echo "png" > $S/img/logo.png
echo "svg" > $S/img/icons/home.svg; echo "# api" > $S/docs/api/README.md; echo "about" > $S/docs/about.html
printf '#!/bin/sh\necho "Content-Type: text/plain"\necho\necho ok\n' > $S/cgi-bin/status.cgi
printf '#!/bin/sh\necho hi\n' > $S/cgi-bin/hello.cgi
chmod 777 $S/css $S/docs; chmod 700 $S/img/icons; chmod 750 $S/docs/api
chmod 666 $S/index.html $S/css/main.css; chmod 600 $S/img/logo.png; chmod 755 $S/docs/about.html
chmod 711 $S/img/icons/home.svg; chmod 640 $S/cgi-bin/status.cgi; chmod 777 $S/cgi-bin/hello.cgi; chmod 700 $S/cgi-bin
