#!/bin/bash
cat > /app/journal_summary.py <<'PY'
import json
import struct
import sys


def parse(data):
    entries, cur, i = [], {}, 0
    while i < len(data):
        if data[i] == 10:
            if cur:
                entries.append(cur)
            cur = {}
            i += 1
            continue
        nl = data.index(b"\n", i)
        line = data[i:nl]
        if b"=" in line:
            k, v = line.split(b"=", 1)
            cur[k.decode()] = v
            i = nl + 1
        else:
            (n,) = struct.unpack("<Q", data[nl + 1:nl + 9])
            cur[line.decode()] = data[nl + 9:nl + 9 + n]
            i = nl + 10 + n
    if cur:
        entries.append(cur)
    return entries


entries = parse(open(sys.argv[1], "rb").read())
errors, first = {}, {}
for e in sorted(entries, key=lambda e: int(e["__REALTIME_TIMESTAMP"])):
    if "PRIORITY" in e and int(e["PRIORITY"]) <= 3:
        u = e.get("_SYSTEMD_UNIT", b"-").decode()
        errors[u] = errors.get(u, 0) + 1
        first.setdefault(u, e.get("MESSAGE", b"").decode("utf-8", "replace"))
print(json.dumps({"entries": len(entries), "boots": len({e.get("_BOOT_ID") for e in entries}),
                  "errors_by_unit": errors, "first_error": first}))
PY
