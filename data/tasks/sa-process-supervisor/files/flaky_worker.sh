#!/bin/bash
# Demo worker: crashes on its first two runs, then succeeds. State in /tmp/flaky_worker.count
n=$(cat /tmp/flaky_worker.count 2>/dev/null || echo 0)
echo $((n + 1)) > /tmp/flaky_worker.count
if [ "$n" -lt 2 ]; then echo "worker crashed (run $((n + 1)))" >&2; exit 3; fi
echo "worker finished"
