#!/bin/bash
sed -E 's/^([A-Za-z0-9_]*(_PASSWORD|_SECRET|_TOKEN))=.*/\1=REDACTED/' /app/app.conf > /app/app.redacted.conf
