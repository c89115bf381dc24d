#!/bin/bash
cat > /app/lookup.sh <<'SH'
#!/bin/bash
# Helpdesk lookup tool, called by the web frontend with user-supplied arguments.
#   lookup.sh USERNAME         print the "name:email:role" record of USERNAME
#   lookup.sh --report NAME    print the report /app/reports/NAME.txt
# Input is validated against an allow-list and never passed through eval.
if [ "$1" = "--report" ]; then
    name=$2
    if [[ ! "$name" =~ ^[A-Za-z0-9_-]+$ ]]; then
        echo "invalid report name" >&2
        exit 2
    fi
    [ -f "/app/reports/$name.txt" ] || exit 1
    cat -- "/app/reports/$name.txt"
else
    user=$1
    if [[ ! "$user" =~ ^[a-z0-9_-]+$ ]]; then
        echo "invalid username" >&2
        exit 2
    fi
    awk -F: -v u="$user" '$1 == u { print; found = 1 } END { exit !found }' /app/data/users.db
fi
SH
chmod 755 /app/lookup.sh
