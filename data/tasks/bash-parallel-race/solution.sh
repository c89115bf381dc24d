#!/bin/bash
set -e
cat > /app/digest_all.sh <<'SH'
#!/bin/bash
# Usage: digest_all.sh DIR OUT
# For every regular file directly inside DIR, computes "<sha256> <line count> <name>"
# in parallel (at most 4 jobs at a time) and writes all the lines, sorted by name,
# to OUT. Prints "digested N file(s)" at the end.
dir=$1
out=$2
tmp=$(mktemp -d)

digest() {
    local f=$1 sum lines
    sum=$(sha256sum "$f" | cut -d' ' -f1)
    sleep 0.05   # simulate a slow checker
    lines=$(wc -l < "$f")
    echo "$sum $lines $(basename "$f")" > "$tmp/$(basename "$f").res"
}

n=0
running=0
for f in "$dir"/*; do
    [ -f "$f" ] || continue
    if [ "$running" -ge 4 ]; then
        wait -n
        running=$((running - 1))
    fi
    digest "$f" &
    running=$((running + 1))
    n=$((n + 1))
done
wait

shopt -s nullglob
res=("$tmp"/*.res)
if [ ${#res[@]} -gt 0 ]; then
    for r in "${res[@]}"; do cat "$r"; done | sort -k3,3 > "$out"
else
    : > "$out"
fi
rm -rf "$tmp"
echo "digested $n file(s)"
SH
chmod +x /app/digest_all.sh
