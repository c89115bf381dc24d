#!/bin/bash
set -e
cat > /app/repo/.git/hooks/commit-msg <<'SH'
#!/bin/bash
msg=$(grep -v '^#' "$1")
subject=$(printf '%s\n' "$msg" | sed -n 1p)
second=$(printf '%s\n' "$msg" | sed -n 2p)
case $subject in Merge\ *) exit 0 ;; esac
re='^(feat|fix|docs|refactor|test|chore)(\([a-z0-9-]+\))?!?: [^ ].*$'
if ! [[ $subject =~ $re ]]; then echo "commit-msg: subject must be 'type(scope): description'" >&2; exit 1; fi
if [ ${#subject} -gt 72 ]; then echo "commit-msg: subject longer than 72 characters" >&2; exit 1; fi
if [ -n "$second" ]; then echo "commit-msg: second line must be empty" >&2; exit 1; fi
exit 0
SH
chmod +x /app/repo/.git/hooks/commit-msg
