set -e
C=/app/configs
mkdir -p $C/hosts/web $C/hosts/db $C/archive $C/other
printf 'max_connections = 200\nlog_level = info\n' > $C/master.conf
ln $C/master.conf $C/hosts/web/app.conf
ln $C/master.conf $C/hosts/db/settings.conf
ln $C/master.conf $C/archive/.master.bak
cp $C/master.conf $C/hosts/web/copy-of-master.conf
ln -s ../../master.conf $C/hosts/db/link.conf
printf 'max_connections = 10\n' > $C/other/small.conf
ln $C/other/small.conf $C/other/small-twin.conf
