#!/bin/bash
find /app/data -type f -newer /app/data/.last_backup > /app/changed.txt
