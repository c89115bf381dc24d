set -e
useradd -m -s /bin/bash nina; useradd -m -s /bin/bash omar
for u in nina omar; do
  H=/home/$u
  mkdir -p $H/.cache/pip $H/projects/web/node_modules/lodash $H/docs $H/.config/app
  echo "cached" > $H/.cache/pip/wheel.bin
  echo "lib" > $H/projects/web/node_modules/lodash/index.js
  echo "$u code" > $H/projects/web/app.js
  echo "scratch" > $H/projects/web/build.tmp
  echo "$u doc" > $H/docs/cv.txt
  echo "key=1" > $H/.config/app/settings.ini
  echo "partial" > $H/docs/upload.tmp
  ln -s docs/cv.txt $H/resume
  chown -R $u:$u $H
done
chmod 600 /home/nina/docs/cv.txt; chmod 700 /home/omar/docs
mkdir -p /app/backup
