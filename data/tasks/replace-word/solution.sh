#!/bin/bash
sed -i 's/staging/production/g' /app/motd.txt
