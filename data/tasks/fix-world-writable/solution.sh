#!/bin/bash
find /app/www -perm -o+w -exec chmod o-w {} +
