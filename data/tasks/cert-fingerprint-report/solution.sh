#!/bin/bash
set -e
openssl x509 -in /app/tls/server.crt -noout -fingerprint -sha256 | cut -d= -f2 > /app/fingerprint.txt
