"""Summarise a web server access log (Common Log Format).

    python3 logstats.py ACCESS_LOG

Each line looks like
    127.0.0.1 - frank [10/Oct/2000:13:55:36 -0700] "GET /apache_pb.gif HTTP/1.0" 200 2326
host, identity ("-"), user ("-" or a name), time, request line (method, path, protocol such as
HTTP/1.0, HTTP/1.1 or HTTP/2.0), status code, and response size in bytes ("-" when no body was sent,
which counts as 0). Prints, in this order:
    requests <number of log lines>
    bytes <sum of sizes>
    status <code> <count>      one line per status code, ascending
    top <path> <count>         the most requested path (ties: the alphabetically smallest)
"""
import re
import sys
from collections import Counter

LINE = re.compile(r'^(\d+.\d+.\d+.\d+) - - \[(.*)\] "(\w+) (.*) HTTP/1.1" (\d+) (\d+)')


def main(path):
    n = 0
    total = 0
    statuses = Counter()
    paths = Counter()
    for line in open(path):
        m = LINE.match(line)
        if not m:
            continue
        n += 1
        total += int(m.group(6))
        statuses[m.group(5)] += 1
        paths[m.group(4)] += 1
    print(f"requests {n}")
    print(f"bytes {total}")
    for code in sorted(statuses):
        print(f"status {code} {statuses[code]}")
    if paths:
        top = max(paths.items(), key=lambda kv: kv[1])
        print(f"top {top[0]} {top[1]}")


if __name__ == "__main__":
    main(sys.argv[1])
