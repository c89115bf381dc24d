#!/bin/bash
f=/app/etc/ssh/sshd_config
sed -i -E \
    -e 's/^Port .*/Port 2222/' \
    -e 's/^PermitRootLogin .*/PermitRootLogin no/' \
    -e 's/^MaxAuthTries .*/MaxAuthTries 3/' \
    -e 's/^PasswordAuthentication .*/PasswordAuthentication no/' \
    -e 's/^PermitEmptyPasswords .*/PermitEmptyPasswords no/' \
    -e 's/^X11Forwarding .*/X11Forwarding no/' "$f"
