#!/bin/bash
set -e
for u in kim lee; do
  H=/home/$u
  chown $u:$u $H; chmod 755 $H
  chown -R $u:$u $H/.ssh; chmod 700 $H/.ssh
  chmod 600 $H/.ssh/authorized_keys
  [ -f $H/.ssh/id_ed25519 ] && chmod 600 $H/.ssh/id_ed25519
  for f in $H/.ssh/*.pub $H/.ssh/known_hosts; do [ -f "$f" ] && chmod 644 "$f"; done
done
true
