#!/bin/bash
find /app/logs -type f -regex '.*\.log\.[0-9]+' -exec gzip {} +
