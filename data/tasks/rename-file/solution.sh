#!/bin/bash
if [ -f /app/a.txt ]; then mv /app/a.txt /app/b.txt; fi
