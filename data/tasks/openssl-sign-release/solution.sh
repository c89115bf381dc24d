#!/bin/bash
set -e
openssl dgst -sha256 -sign /app/keys/release.key -out /app/release/app-2.1.0.tar.gz.sig /app/release/app-2.1.0.tar.gz
