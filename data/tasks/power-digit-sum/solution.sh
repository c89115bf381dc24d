#!/bin/bash
set -e
python3 -c 'n = 7 ** 777; s = str(n); print(len(s)); print(sum(map(int, s)))' > /app/answer.txt
