set -e
mkdir -p /app/data && cd /app/data
mk() { mkdir -p "$(dirname "$1")"; head -c "$2" /dev/zero | tr '\0' 'x' > "$1"; TZ=UTC touch -d "$3" "$1"; }
mk reports/2019/q1.csv 600000 "2019-04-02 10:00:00"
mk reports/2019/q2.csv 400000 "2019-07-02 10:00:00"
mk reports/2023/annual.pdf 2000000 "2023-12-31 23:59:00"
mk reports/2024/jan.csv 900000 "2024-01-01 00:00:30"
mk backups/db-2022.sql 5242880 "2022-06-01 03:00:00"
mk backups/db-2024.sql 5242880 "2024-06-01 03:00:00"
mk "media/old video.mp4" 3000000 "2021-02-14 18:00:00"
mk media/thumb.png 512000 "2020-01-01 00:00:00"
mk media/exact.bin 512001 "2020-01-01 00:00:00"
mk tmp/cache/blob.dat 700000 "2018-09-09 09:09:09"
mk tmp/cache/new.dat 700000 "2025-01-01 00:00:00"
mk notes.txt 100 "2017-01-01 00:00:00"
ln -s backups/db-2022.sql latest-backup.sql
