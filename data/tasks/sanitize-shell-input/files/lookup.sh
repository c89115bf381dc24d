#!/bin/bash
# Helpdesk lookup tool, called by the web frontend with user-supplied arguments.
#   lookup.sh USERNAME         print the "name:email:role" record of USERNAME
#   lookup.sh --report NAME    print the report /app/reports/NAME.txt
if [ "$1" = "--report" ]; then
    eval "cat /app/reports/$2.txt"
else
    eval "grep '^$1:' /app/data/users.db"
fi
