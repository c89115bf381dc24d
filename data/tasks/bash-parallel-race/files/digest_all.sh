#!/bin/bash
# Usage: digest_all.sh DIR OUT
# For every regular file directly inside DIR, computes "<sha256> <line count> <name>"
# in parallel (at most 4 jobs at a time) and writes all the lines, sorted by name,
# to OUT. Prints "digested N file(s)" at the end.
dir=$1
out=$2
tmp=/tmp/digest.$$
mkdir -p "$tmp"

digest() {
    local f=$1
    sha256sum "$f" | cut -d' ' -f1 > "$tmp/current"
    sleep 0.05   # simulate a slow checker
    lines=$(wc -l < "$f")
    echo "$(cat "$tmp/current") $lines $(basename "$f")" > "$tmp/$(basename "$f").res"
}

n=0
for f in "$dir"/*; do
    [ -f "$f" ] || continue
    digest "$f" &
    n=$((n + 1))
    if [ $((n % 4)) -eq 0 ]; then
        sleep 0.01
    fi
done

cat "$tmp"/*.res | sort -k3 > "$out"
rm -rf "$tmp"
echo "digested $n file(s)"
