set -e
W=$(mktemp -d); B=/app/backups; mkdir -p $B
mkdir -p $W/project/src $W/project/docs $W/project/old
echo "v1 main" > $W/project/src/main.py
echo "util" > $W/project/src/util.py
echo "readme v1" > $W/project/README.md
echo "legacy" > $W/project/old/legacy.txt
echo "guide" > $W/project/docs/guide.md
tar -C $W -g $W/snar -czf $B/backup-0-full.tar.gz project
sleep 1.1
echo "v2 main" > $W/project/src/main.py
rm $W/project/src/util.py
echo "helpers" > $W/project/src/helpers.py
rm -r $W/project/old
mkdir -p $W/project/tests && echo "test" > $W/project/tests/test_main.py
tar -C $W -g $W/snar -czf $B/backup-1-incr.tar.gz project
sleep 1.1
echo "readme v3" > $W/project/README.md
mv $W/project/docs/guide.md $W/project/docs/manual.md
echo "changelog" > $W/project/CHANGELOG
rm $W/project/tests/test_main.py
tar -C $W -g $W/snar -czf $B/backup-2-incr.tar.gz project
rm -rf $W
