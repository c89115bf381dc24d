#!/bin/bash
set -e
cat > /app/healthcheck.sh <<'SH'
#!/bin/bash
file="$1"
if [ ! -f "$file" ]; then
    echo "healthcheck: targets file '$file' not found" >&2
    exit 2
fi
ok=0; fail=0
while read -r name url expect; do
    case "$name" in ''|'#'*) continue ;; esac
    tmp=$(mktemp)
    code=$(curl -s -o "$tmp" -w '%{http_code}' --max-time 3 "$url" 2>/dev/null) || code=000
    if [[ "$code" == 2?? ]] && { [ -z "$expect" ] || grep -qF -- "$expect" "$tmp"; }; then
        echo "$name OK"; ok=$((ok + 1))
    else
        echo "$name FAIL"; fail=$((fail + 1))
    fi
    rm -f "$tmp"
done < "$file"
echo "SUMMARY ok=$ok fail=$fail"
[ "$fail" -eq 0 ]
SH
chmod +x /app/healthcheck.sh
