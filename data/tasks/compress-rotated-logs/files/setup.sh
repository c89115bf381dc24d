set -e
L=/app/logs
mkdir -p $L/nginx
for n in app worker; do
  for i in 1 2 3; do seq -f "$n rotated $i line %g" 1 $((i*40)) > $L/$n.log.$i; done
  echo "$n current" > $L/$n.log
done
for i in 1 2; do seq -f "access $i line %g" 1 30 > $L/nginx/access.log.$i; done
echo "access current" > $L/nginx/access.log
seq -f "app rotated 4 line %g" 1 10 | gzip -n > $L/app.log.4.gz
echo "keep me" > $L/README.1st
