#!/bin/bash
set -e
tail -n +2 /app/new_users.csv | while IFS=, read -r user uid name groups shell; do
  groupadd -g "$uid" "$user"
  useradd -m -u "$uid" -g "$uid" -c "$name" -s "$shell" -d "/home/$user" "$user"
  IFS=';' read -ra gs <<< "$groups"
  for g in "${gs[@]}"; do
    [ -z "$g" ] && continue
    getent group "$g" >/dev/null || groupadd -r "$g"
    usermod -aG "$g" "$user"
  done
done
