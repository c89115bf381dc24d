set -e
V=/app/var
mkdir -p $V/log/nginx $V/lib/postgres $V/cache/apt $V/crash $V/www/uploads
mk() { head -c "$2" /dev/zero | tr '\0' 'x' > "$V/$1"; }
mk log/nginx/access.log 734003
mk log/nginx/error.log 120450
mk log/syslog 905211
mk lib/postgres/base.dat 2097152
mk lib/postgres/wal.dat 1048576
mk cache/apt/pkgcache.bin 1500000
mk cache/apt/srcpkgcache.bin 1499999
mk crash/core.4121 3145728
mk crash/core 2500000
mk www/uploads/core.png 640000
mk www/uploads/report.pdf 88000
mk www/core.dump.txt 4000
mk log/core.17 999999
