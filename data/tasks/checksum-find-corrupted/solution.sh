#!/bin/bash
cd /app/downloads
sha256sum -c SHA256SUMS 2>/dev/null | grep ': FAILED$' | sed 's/: FAILED$//' | sort > /app/corrupted.txt
true
