#!/bin/bash
set -e
cat > /app/lines.sh <<'SH'
#!/bin/bash
usage() { echo "usage: lines.sh [-n] [-r] [-s START] [-e END] FILE" >&2; exit 2; }
num=0 rev=0 start=1 end=
while getopts ":nrs:e:" opt; do
    case $opt in
        n) num=1 ;;
        r) rev=1 ;;
        s) [[ $OPTARG =~ ^[0-9]+$ ]] && (( 10#$OPTARG > 0 )) || usage; start=$((10#$OPTARG)) ;;
        e) [[ $OPTARG =~ ^[0-9]+$ ]] && (( 10#$OPTARG > 0 )) || usage; end=$((10#$OPTARG)) ;;
        *) usage ;;
    esac
done
shift $((OPTIND - 1))
[ $# -eq 1 ] || usage
file=$1
if [ ! -r "$file" ] || [ -d "$file" ]; then echo "lines.sh: cannot read $file" >&2; exit 1; fi
awk -v s="$start" -v e="$end" -v n="$num" '
    NR >= s && (e == "" || NR <= e) { print (n ? NR "\t" : "") $0 }
' "$file" | if [ $rev = 1 ]; then tac; else cat; fi
SH
chmod +x /app/lines.sh
