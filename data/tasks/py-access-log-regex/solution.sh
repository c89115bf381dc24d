#!/bin/bash
set -e
python3 - <<'PY'
p = "/app/logstats.py"
s = open(p).read()
s = s.replace(r'''LINE = re.compile(r'^(\d+.\d+.\d+.\d+) - - \[(.*)\] "(\w+) (.*) HTTP/1.1" (\d+) (\d+)')''',
              r'''LINE = re.compile(r'^(\S+) (\S+) (\S+) \[([^\]]*)\] "(\w+) (\S+) (HTTP/[\d.]+)" (\d{3}) (\d+|-)\s*$')''')
s = s.replace('total += int(m.group(6))', 'total += 0 if m.group(9) == "-" else int(m.group(9))')
s = s.replace('statuses[m.group(5)] += 1', 'statuses[m.group(8)] += 1')
s = s.replace('paths[m.group(4)] += 1', 'paths[m.group(6)] += 1')
s = s.replace('top = max(paths.items(), key=lambda kv: kv[1])', 'top = min(paths.items(), key=lambda kv: (-kv[1], kv[0]))')
open(p, "w").write(s)
PY
