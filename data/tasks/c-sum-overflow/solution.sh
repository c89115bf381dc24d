#!/bin/bash
set -e
cd /app
python3 - <<'PY'
p = "/app/tally.c"
s = open(p).read()
s = s.replace("int sum = 0;", "unsigned long long sum = 0;").replace("int max = 0;", "unsigned long long max = 0;")
s = s.replace("int count = 0;", "long long count = 0;")
s = s.replace("int v = atoi(line);", "unsigned long long v = strtoull(line, NULL, 10);")
s = s.replace("sum / count", "(double)sum / count")
s = s.replace('count=%d sum=%d max=%d', 'count=%lld sum=%llu max=%llu')
open(p, "w").write(s)
PY
make -B
