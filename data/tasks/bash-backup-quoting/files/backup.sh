#!/bin/bash
# Usage: backup.sh SRC_DIR DEST_DIR
# Copies every regular file directly inside SRC_DIR whose name ends in .txt to DEST_DIR,
# naming the copy <original name>.bak, then prints "backed up N file(s)".
# With a missing argument it prints "usage: backup.sh SRC_DIR DEST_DIR" to stderr and exits 2.
if [ -z $1 ] || [ -z $2 ]; then
    echo "usage: backup.sh SRC_DIR DEST_DIR" >&2
    exit 2
fi
src=$1
dest=$2
mkdir -p $dest
count=0
for f in $(ls $src/*.txt); do
    cp $f $dest/$(basename $f).bak
    count=$((count + 1))
done
echo "backed up $count file(s)"
