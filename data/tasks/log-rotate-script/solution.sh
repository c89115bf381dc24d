#!/bin/bash
cat > /app/rotate.sh <<'SH'
#!/bin/bash
# Rotate every non-empty DIR/*.log: keep 3 gzip'd generations, newest is .1.gz.
set -e
dir=${1:?usage: rotate.sh DIR}
shopt -s nullglob
for log in "$dir"/*.log; do
    [ -f "$log" ] && [ -s "$log" ] || continue
    rm -f "$log.3.gz"
    for i in 2 1; do
        [ -e "$log.$i.gz" ] && mv -f "$log.$i.gz" "$log.$((i + 1)).gz"
    done
    mode=$(stat -c %a "$log")
    gzip -c "$log" > "$log.1.gz"
    : > "$log"
    chmod "$mode" "$log"
done
exit 0
SH
chmod 755 /app/rotate.sh
