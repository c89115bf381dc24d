set -e
for u in anna boris chen; do useradd -M -s /usr/sbin/nologin $u; done
S=/app/share; mkdir -p $S/projects/a $S/projects/b $S/media $S/.cache
mk() { head -c $2 /dev/zero | tr '\0' 'x' > $S/$1; chown $3 $S/$1; }
mk projects/a/report.pdf 120000 anna
mk projects/a/data.csv 45500 anna
mk projects/b/model.bin 300000 boris
mk projects/b/notes.txt 1234 chen
mk media/video.mp4 250000 chen
mk media/song.ogg 99999 anna
mk .cache/blob 77777 boris
mk media/orphan.dat 5000 4242
mk projects/readme.md 10 root
ln $S/projects/b/model.bin $S/media/model-link.bin
ln -s ../projects/a/report.pdf $S/media/report-shortcut.pdf
chown -h chen $S/media/report-shortcut.pdf
chown -R boris $S/projects/b 2>/dev/null || true
chown chen $S/projects/b/notes.txt
